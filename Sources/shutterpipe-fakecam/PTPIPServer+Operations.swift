import Foundation
import ShutterPipeKit
import Synchronization

/// The PTP operations: what each command does to the camera, and its answer.
extension PTPIPServer {
    func execute(_ code: UInt16, _ parameters: [UInt32], _ incoming: Data, transaction: UInt32)
        -> (PTP.Response, Payload?, [UInt32]) {
        func parameter(_ index: Int) -> UInt32 { index < parameters.count ? parameters[index] : 0 }
        if code != PTP.Operation.openSession.rawValue, slowSteps.withLock({ left in defer { left = max(0, left - 1) }; return left > 0 }) {
            usleep(UInt32(camera.options.openDelay.milliseconds * 500))
        }
        switch PTP.Operation(rawValue: code) {
        case .openSession:
            if camera.options.openDelay > .zero {
                // Half now, half on the next operation: each step stays within libgphoto2's
                // PTP/IP read timeout (2.5 s), as a camera waking up step by step does.
                log("opening a session slowly (--open-delay)")
                slowSteps.withLock { $0 = 1 }
                usleep(UInt32(camera.options.openDelay.milliseconds * 500))
            }
            return camera.state.withLock { state in
                if state.sessionOpen { return (.sessionAlreadyOpen, nil, []) }
                state.sessionOpen = true
                return (.ok, nil, [])
            }
        case .closeSession:
            camera.state.withLock { $0.sessionOpen = false }
            return (.ok, nil, [])
        case .getDeviceInfo:
            return (.ok, Payload(camera.deviceInfo()), [])
        case .getStorageIDs:
            var w = PTPWriter(); w.array32([PTP.storageID])
            return (.ok, Payload(w.data), [])
        case .getStorageInfo:
            return (.ok, Payload(camera.storageInfo()), [])
        case .getNumObjects:
            return (.ok, nil, [UInt32(camera.handles(parent: parameter(2)).count)])
        case .getObjectHandles:
            var w = PTPWriter(); w.array32(camera.handles(parent: parameter(2)))
            return (.ok, Payload(w.data), [])
        case .getObjectInfo:
            guard let info = camera.objectInfo(parameter(0)) else { return (.invalidObjectHandle, nil, []) }
            return (.ok, Payload(info), [])
        case .getObject:
            guard let object = camera.object(parameter(0)) else { return (.invalidObjectHandle, nil, []) }
            let cutShort = shortTransfersLeft.withLock { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            if cutShort && object.data.count > 1 {
                log("sent \(object.name) cut short: \(object.data.count / 2) of \(object.data.count) bytes")
                return (.ok, Payload([object.data.bytes(in: 0..<object.data.count / 2)]), [])
            }
            return (.ok, object.data, [])
        case .getPartialObject:
            guard let object = camera.object(parameter(0)) else { return (.invalidObjectHandle, nil, []) }
            let start = min(Int(parameter(1)), object.data.count)
            let end = min(object.data.count, start + Int(parameter(2)))
            let slice = object.data.bytes(in: start..<end)
            return (.ok, Payload(slice), [UInt32(slice.count)])
        case .deleteObject:
            if camera.options.deleteDelay > .zero {
                // A slow card, and the camera's free-space property changing as it goes.
                usleep(UInt32(camera.options.deleteDelay.milliseconds * 1000))
                sendEvent(.devicePropChanged, transaction: transaction, parameter: 0x5001)
            }
            return (camera.delete(parameter(0)) ? .ok : .invalidObjectHandle, nil, [])
        case .initiateCapture:
            let result = camera.capture()
            lastCapture.withLock { $0 = result }
            switch result {
            case .success: return (.ok, nil, [])
            case .failure(let code): log("capture refused: \(code == .deviceBusy ? "device busy" : "store full")"); return (code, nil, [])
            }
        case .initiateOpenCapture where camera.options.bulb:
            let response = camera.openBulb()
            log(response == .ok ? "bulb: the shutter is open" : "bulb refused: \(response)")
            return (response, nil, [])
        case .terminateOpenCapture where camera.options.bulb:
            guard let seconds = camera.closeBulb() else { return (.generalError, nil, []) }
            log(String(format: "bulb: the shutter closed after %.3f ms", seconds * 1000))
            return (.ok, nil, [])
        case .getStreamInfo where camera.options.noLiveView, .getStream where camera.options.noLiveView:
            return (.operationNotSupported, nil, [])
        case .getStreamInfo:
            guard parameter(0) == 1 else { return (.invalidParameter, nil, []) }
            return (.ok, Payload(camera.streamInfo()), [])
        case .getStream:
            guard camera.state.withLock({ $0.properties[0x5021]?.current == 1 }) else { return (.accessDenied, nil, []) }
            return (.ok, Payload(camera.liveViewFrame()), [])
        case .getDevicePropDesc:
            guard let description = camera.propertyDescription(UInt16(parameter(0))) else { return (.devicePropNotSupported, nil, []) }
            return (.ok, Payload(description), [])
        case .getDevicePropValue:
            guard let value = camera.propertyValue(UInt16(parameter(0))) else { return (.devicePropNotSupported, nil, []) }
            return (.ok, Payload(value), [])
        case .setDevicePropValue:
            let response = camera.setProperty(UInt16(parameter(0)), incoming)
            log(String(format: "property 0x%04x set to %@: %@", parameter(0), PTPReader.describe(incoming), response == .ok ? "taken" : "refused"))
            return (response, nil, [])
        case nil where (0x9000...0x9FFF).contains(code):
            // A vendor operation (what libgphoto2's `opcode` setting sends): done, with an
            // empty data phase, as a camera that has it would.
            log(String(format: "vendor operation 0x%04x %@ done", code, parameters.description))
            return (.ok, Payload(), [])  // libgphoto2's `opcode` asks for a data phase
        default:
            return (.operationNotSupported, nil, [])
        }
    }
}
