import ShutterPipeImaging
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// A lens's focus measured on live view (`shutterpipe calibrate focus`): the sharpness of
/// the picture at each position of the lens's setting, what it says about a focus stack,
/// and where it is kept (by lens name).
struct FocusCalibration: Codable, Equatable {
    /// One position of the sweep.
    struct Position: Codable, Equatable {
        /// The setting's value ("1800 mm") and the number in it.
        var value: String
        var number: Double
        /// The variance of the live frame's Laplacian: higher is sharper.
        var sharpness: Double
    }

    /// The lens's name as the camera gives it (libgphoto2's `lensname`), else the camera's
    /// model and serial number.
    var lens: String
    var setting: String
    var positions: [Position]
    /// When it was measured, ISO 8601.
    var measured: String

    /// The sharpest position.
    var sharpest: Position? { positions.max { $0.sharpness < $1.sharpness } }

    /// Each position's sharpness from 0 (the least sharp of the sweep) to 1 (the sharpest),
    /// on a log scale: a lens in focus is orders of magnitude sharper than one a few
    /// positions off, and the positions between still tell the subject from the blur.
    var normalised: [Double] {
        let values = positions.map { log1p(max(0, $0.sharpness)) }
        guard let low = values.min(), let high = values.max(), high > low else { return values.map { _ in 0 } }
        return values.map { ($0 - low) / (high - low) }
    }

    /// How many positions around the sharpest are at least half as sharp (0 to 1 scale):
    /// the depth the lens holds in focus, in positions.
    var sharpWidth: Int {
        guard let peak = normalised.indices.max(by: { normalised[$0] < normalised[$1] }) else { return 0 }
        var low = peak, high = peak
        while low > 0, normalised[low - 1] >= 0.5 { low -= 1 }
        while high < normalised.count - 1, normalised[high + 1] >= 0.5 { high += 1 }
        return high - low + 1
    }

    /// The step of a focus stack whose frames leave no point of the subject more than half
    /// a sharp width from a frame: the sharp width, at least 1.
    var stackStep: Int { max(1, sharpWidth) }

    /// The positions where the subject shows any focus (a tenth of the way up or more):
    /// where a stack of it starts and ends.
    var subject: ClosedRange<Int>? {
        let inFocus = normalised.indices.filter { normalised[$0] >= 0.1 }
        guard let first = inFocus.first, let last = inFocus.last else { return nil }
        return first...last
    }

    /// A focus stack over the subject, as a config line.
    var stackPlan: String? {
        guard let subject else { return nil }
        let frames = (subject.count - 1 + stackStep - 1) / stackStep + 1
        return "{kind: focus-stack, setting: \(setting), from: \(SequenceNumber.text(positions[subject.lowerBound].number)), step: \(stackStep), frames: \(frames)}"
    }

    /// `$XDG_STATE_HOME/shutterpipe/lenses` (else `~/.local/state/shutterpipe/lenses`).
    static var folder: String {
        let environment = ProcessInfo.processInfo.environment
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? PluginOptions.expandingTilde("~/.local/state")
        return "\(state)/shutterpipe/lenses"
    }

    /// The file a lens is kept in: its name, in bytes that are safe in a file name (the
    /// name comes from the camera), at most 96 of them.
    static func file(for lens: String) -> String {
        let safe = lens.utf8.prefix(96).map { byte -> Character in
            let scalar = Unicode.Scalar(byte)
            return scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == ".") ? Character(scalar) : "_"
        }
        let name = String(safe).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        return "\(folder)/\(name.isEmpty ? "lens" : name).json"
    }

    /// Keeps it, replacing what was kept for this lens (durably: a temporary file, fsync, rename).
    func keep() throws -> String {
        let path = Self.file(for: lens)
        try FileManager.default.createDirectory(atPath: Self.folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try DurableFile.replace(path, with: try encoder.encode(self))
        return path
    }
}

/// Numbers as a config writes them: `1800`, `2.5`.
enum SequenceNumber {
    static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// The sharpness of a live-view frame: the variance of its Laplacian (the 3×3 kernel
/// 0 1 0 / 1 −4 1 / 0 1 0 over the grey picture). A picture in focus has strong edges and
/// a high variance; a blurred one a low one. Decoded grey (``JPEGDecoder``), within a
/// pixel budget read from the header first; run on a thread of its own.
enum LiveSharpness {
    /// The largest live frame measured.
    static let maxPixels = 40_000_000

    static func of(_ jpeg: Data) throws -> Double {
        let grey: (pixels: [UInt8], width: Int, height: Int)
        do { grey = try JPEGDecoder.decodeGrey(jpeg, maxPixels: maxPixels) } catch {
            throw ShutterError(.cameraFailure, "a live-view frame that is not a JPEG this can measure: \(error.message)")
        }
        guard grey.width >= 3, grey.height >= 3 else {
            throw ShutterError(.cameraFailure, "a live-view frame of \(grey.width)×\(grey.height) pixels: too small to measure")
        }
        return laplacianVariance(grey.pixels, width: grey.width, height: grey.height)
    }

    static func laplacianVariance(_ grey: [UInt8], width: Int, height: Int) -> Double {
        var sum = 0.0, squares = 0.0
        for y in 1..<(height - 1) {
            for x in 1..<(width - 1) {
                let at = y * width + x
                let value = Double(Int(grey[at - 1]) + Int(grey[at + 1]) + Int(grey[at - width]) + Int(grey[at + width]) - 4 * Int(grey[at]))
                sum += value
                squares += value * value
            }
        }
        let count = Double((width - 2) * (height - 2))
        let mean = sum / count
        return squares / count - mean * mean
    }
}
