import Foundation
import ShutterPipeFixtures
import ShutterPipeKit
import Synchronization

/// The PTP datasets the camera describes itself with: its device info, storages, objects
/// and properties.
extension VirtualCamera {
    func deviceInfo() -> Data {
        var w = PTPWriter()
        w.u16(100); w.u32(0); w.u16(0); w.string(""); w.u16(0)
        w.array16([0x1001, 0x1002, 0x1003, 0x1004, 0x1005, 0x1006, 0x1007, 0x1008, 0x1009, 0x100B, 0x100E, 0x1014, 0x1015, 0x1016, 0x101B]
                  + (options.noLiveView ? [] : [0x1024, 0x1025]) + (options.bulb ? [0x1018, 0x101C] : []))
        w.array16([0x4002, 0x400A, 0x400D])
        w.array16(state.withLock { $0.properties.keys.sorted() })
        w.array16([PTP.formatJPEG])
        w.array16([PTP.formatJPEG, PTP.formatRaw, PTP.formatAssociation])
        w.string("Shutterpipe"); w.string(options.model); w.string("1.0"); w.string(options.serial)
        return w.data
    }

    func storageInfo() -> Data {
        let used = state.withLock { $0.objects.values.reduce(UInt64(0)) { $0 + UInt64($1.data.count) } }
        let full = state.withLock { state in options.storeFullAfter.map { state.captures >= $0 } ?? false }
        var w = PTPWriter()
        w.u16(0x0004); w.u16(0x0002); w.u16(0x0000)
        w.u64(Self.capacity); w.u64(full ? 0 : Self.capacity - used); w.u32(full ? 0 : 9999)
        w.string("Virtual SD card"); w.string("SHUTTERPIPE")
        return w.data
    }

    func objectInfo(_ handle: UInt32) -> Data? {
        guard let object = state.withLock({ $0.objects[handle] }) else { return nil }
        var w = PTPWriter()
        let isFolder = object.format == PTP.formatAssociation
        w.u32(PTP.storageID); w.u16(object.format); w.u16(0); w.u32(UInt32(object.data.count))
        w.u16(0); w.u32(0); w.u32(0); w.u32(0)
        w.u32(isFolder ? 0 : UInt32(options.width)); w.u32(isFolder ? 0 : UInt32(options.height)); w.u32(isFolder ? 0 : 24)
        w.u32(object.parent); w.u16(isFolder ? 1 : 0); w.u32(0); w.u32(0)
        w.string(object.name)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss"
        w.string(formatter.string(from: object.captureDate)); w.string(formatter.string(from: object.captureDate)); w.string("")
        return w.data
    }

    /// Handles for GetObjectHandles(storage, format, parent): parent 0xFFFFFFFF means root
    /// objects, 0 every object, anything else that folder's children.
    func handles(parent: UInt32) -> [UInt32] {
        state.withLock { state in
            state.objects.values.filter { object in
                switch parent {
                case 0xFFFF_FFFF: return object.parent == 0
                case 0: return true
                default: return object.parent == parent
                }
            }.map(\.handle).sorted()
        }
    }

    func object(_ handle: UInt32) -> CardObject? { state.withLock { $0.objects[handle] } }

    func delete(_ handle: UInt32) -> Bool {
        state.withLock { state in
            guard let object = state.objects[handle], object.format != PTP.formatAssociation else { return false }
            state.objects[handle] = nil
            return true
        }
    }

    func propertyDescription(_ code: UInt16) -> Data? {
        guard let property = state.withLock({ $0.properties[code] }) else { return nil }
        var w = PTPWriter()
        w.u16(property.code); w.u16(property.dataType); w.u8(property.writable ? 1 : 0)
        if property.dataType == PTP.typeString {
            let text = state.withLock { $0.dateTime }
            w.string(text); w.string(text); w.u8(0)
            return w.data
        }
        value(property.current, type: property.dataType, into: &w)
        value(property.current, type: property.dataType, into: &w)
        if let choices = property.choices {
            w.u8(2); w.u16(UInt16(choices.count))
            for choice in choices { value(choice, type: property.dataType, into: &w) }
        } else if let (minimum, maximum, step) = property.range {
            w.u8(1)
            value(minimum, type: property.dataType, into: &w); value(maximum, type: property.dataType, into: &w); value(step, type: property.dataType, into: &w)
        } else {
            w.u8(0)
        }
        return w.data
    }

    func propertyValue(_ code: UInt16) -> Data? {
        guard let property = state.withLock({ $0.properties[code] }) else { return nil }
        var w = PTPWriter()
        if property.dataType == PTP.typeString { w.string(state.withLock { $0.dateTime }) } else { value(property.current, type: property.dataType, into: &w) }
        return w.data
    }

    /// Sets a property from its encoded value; refuses values outside its choices.
    func setProperty(_ code: UInt16, _ data: Data) -> PTP.Response {
        state.withLock { state in
            guard var property = state.properties[code] else { return .devicePropNotSupported }
            guard property.writable else { return .invalidDevicePropValue }
            var reader = PTPReader(data)
            if property.dataType == PTP.typeString {
                guard let text = reader.string(), !text.isEmpty else { return .invalidDevicePropValue }
                state.dateTime = text
                return .ok
            }
            let raw: UInt32?
            switch property.dataType {
            case 2: raw = data.first.map(UInt32.init)
            case 4: raw = reader.u16().map(UInt32.init)
            default: raw = reader.u32()
            }
            guard let raw, property.choices?.contains(raw) ?? true else { return .invalidDevicePropValue }
            property.current = raw
            state.properties[code] = property
            if code == 0x5009 { lens.millimetres.store(raw, ordering: .relaxed) }
            return .ok
        }
    }

    private func value(_ value: UInt32, type: UInt16, into w: inout PTPWriter) {
        switch type {
        case 2: w.u8(UInt8(value))
        case 4: w.u16(UInt16(value))
        default: w.u32(value)
        }
    }
}
