import Foundation

/// The EXIF summary of a shot, read from its file.
public struct ExifSummary: Sendable, Equatable, Codable {
    /// "1/125" or "2" (seconds).
    public var exposureTime: String?
    /// The f-number: 5.6.
    public var aperture: Double?
    /// ISO speed.
    public var iso: Int?
    /// Focal length in millimetres.
    public var focalLength: Double?
    /// The lens model.
    public var lens: String?
    /// EXIF orientation, 1 to 8.
    public var orientation: Int?
    /// DateTimeOriginal as the camera wrote it ("2026:12:03 14:02:11").
    public var captureTime: String?
    /// Make and model of the camera ("Canon EOS R5").
    public var model: String?
    /// The camera body's serial number.
    public var serial: String?

    public init() {}

    /// Whether nothing was found.
    public var isEmpty: Bool { self == ExifSummary() }

    /// "Canon EOS R5" from Make "Canon" and Model "Canon EOS R5" (the make said once), or
    /// "Make Model" when the model does not start with the make's first word.
    public static func modelName(make: String?, model: String?) -> String? {
        guard let make, let model else { return model ?? make }
        let brand = make.lowercased().split(separator: " ").first.map(String.init) ?? make.lowercased()
        return model.lowercased().hasPrefix(brand) ? model : "\(make) \(model)"
    }
}
