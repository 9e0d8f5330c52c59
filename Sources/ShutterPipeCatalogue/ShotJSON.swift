#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Shots as JSON, written by hand: the same document `JSONEncoder` makes of
/// ``CatalogueShot`` (sorted keys, ISO 8601 dates in UTC, absent values left out, `pick` as
/// -1, 0 or 1), in a fifth of the time, which 10,000 shots notice (docs/benchmarks.md).
public enum ShotJSON {
    public static func encode(_ shots: [CatalogueShot]) -> String {
        var out = "["
        out.reserveCapacity(shots.count * 600)
        for (index, shot) in shots.enumerated() {
            if index > 0 { out += "," }
            write(shot, into: &out)
        }
        out += "]"
        return out
    }

    static func write(_ shot: CatalogueShot, into out: inout String) {
        var object = Object()
        object.open(&out)
        object.date("asked", shot.asked, &out)
        object.string("camera", shot.camera, &out)
        object.string("cameraPort", shot.cameraPort, &out)
        object.key("exif", &out)
        var exif = Object()
        exif.open(&out)
        exif.number("aperture", shot.exif.aperture, &out)
        exif.string("captureTime", shot.exif.captureTime, &out)
        exif.string("exposureTime", shot.exif.exposureTime, &out)
        exif.number("focalLength", shot.exif.focalLength, &out)
        exif.integer("iso", shot.exif.iso, &out)
        exif.string("lens", shot.exif.lens, &out)
        exif.string("model", shot.exif.model, &out)
        exif.integer("orientation", shot.exif.orientation, &out)
        exif.string("serial", shot.exif.serial, &out)
        out += "}"
        object.string("failureCause", shot.failureCause, &out)
        object.string("failureMessage", shot.failureMessage, &out)
        object.key("files", &out)
        out += "["
        for (index, file) in shot.files.enumerated() {
            if index > 0 { out += "," }
            var entry = Object()
            entry.open(&out)
            entry.string("camera", file.camera, &out)
            entry.string("cameraFile", file.cameraFile, &out)
            entry.key("copies", &out)
            out += "["
            for (number, copy) in file.copies.enumerated() {
                if number > 0 { out += "," }
                var item = Object()
                item.open(&out)
                item.string("destination", copy.destination, &out)
                item.string("location", copy.location, &out)
                item.date("time", copy.time, &out)
                out += "}"
            }
            out += "]"
            entry.string("kind", file.kind.rawValue, &out)
            entry.key("missing", &out)
            out += file.missing ? "true" : "false"
            entry.string("path", file.path, &out)
            entry.string("sha256", file.sha256, &out)
            entry.integer("size", file.size, &out)
            out += "}"
        }
        out += "]"
        object.date("fired", shot.fired, &out)
        object.key("frames", &out)
        out += "["
        for (index, frame) in shot.frames.enumerated() {
            if index > 0 { out += "," }
            var entry = Object()
            entry.open(&out)
            entry.string("camera", frame.camera, &out)
            entry.string("label", frame.label, &out)
            entry.integer("pick", frame.pick.rawValue, &out)
            entry.integer("rating", frame.rating, &out)
            out += "}"
        }
        out += "]"
        object.integer("id", shot.id, &out)
        object.key("keywords", &out)
        out += "["
        for (index, keyword) in shot.keywords.enumerated() {
            if index > 0 { out += "," }
            appendString(keyword, to: &out)
        }
        out += "]"
        object.string("label", shot.label, &out)
        object.integer("pick", shot.pick.rawValue, &out)
        object.integer("rating", shot.rating, &out)
        object.integer("runNumber", shot.runNumber, &out)
        if let place = shot.sequence {
            object.key("sequence", &out)
            var entry = Object()
            entry.open(&out)
            entry.integer("count", place.count, &out)
            entry.number("ev", place.ev, &out)
            entry.integer("index", place.index, &out)
            entry.string("kind", place.kind, &out)
            entry.string("name", place.name, &out)
            entry.integer("run", place.run, &out)
            entry.string("setting", place.setting, &out)
            entry.string("value", place.value, &out)
            out += "}"
        }
        object.string("session", shot.session, &out)
        object.string("sessionLabel", shot.sessionLabel, &out)
        object.integer("sessionRun", shot.sessionRun, &out)
        object.string("shotID", shot.shotID?.description, &out)
        object.string("state", shot.state.rawValue, &out)
        object.date("stored", shot.stored, &out)
        object.string("trigger", shot.trigger, &out)
        out += "}"
    }

    /// The keys of one JSON object being written, in the order given (the caller sorts).
    struct Object {
        private var first = true

        mutating func open(_ out: inout String) {
            out += "{"
        }

        mutating func key(_ name: String, _ out: inout String) {
            out += first ? "\"" : ",\""
            out += name
            out += "\":"
            first = false
        }

        mutating func string(_ name: String, _ value: String?, _ out: inout String) {
            guard let value else { return }
            key(name, &out)
            appendString(value, to: &out)
        }

        mutating func integer(_ name: String, _ value: Int?, _ out: inout String) {
            guard let value else { return }
            key(name, &out)
            out += String(value)
        }

        mutating func number(_ name: String, _ value: Double?, _ out: inout String) {
            guard let value else { return }
            key(name, &out)
            out += value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
        }

        mutating func date(_ name: String, _ value: Date?, _ out: inout String) {
            guard let value else { return }
            key(name, &out)
            var seconds = time_t(value.timeIntervalSince1970.rounded(.down))
            var parts = tm()
            gmtime_r(&seconds, &parts)
            func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : String(number) }
            out += "\"\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z\""
        }
    }

    /// A JSON string literal.
    static func appendString(_ text: String, to out: inout String) {
        JSONText.string(text, to: &out)
    }
}
