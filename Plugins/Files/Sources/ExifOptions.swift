import Foundation
import ShutterPipeKit

/// The `exif:` block of the `files` sink: tag names mapped to templates, a fixed
/// location, and what to do with the capture time.
public struct ExifOptions: Sendable, Equatable {
    /// When the capture time goes into DateTimeOriginal, SubSecTimeOriginal and
    /// OffsetTimeOriginal.
    public enum CaptureTime: String, Sendable, CaseIterable {
        /// Only where the camera wrote no DateTimeOriginal (the default).
        case ifMissing
        /// Always, replacing the camera's.
        case always
        /// Never.
        case never
    }

    var tags: [ExifTagName: PlaceholderTemplate] = [:]
    var keywords: [PlaceholderTemplate] = []
    var gps: GPSLocation?
    var captureTime: CaptureTime = .ifMissing

    /// The keys of the block that are not tag names.
    static let settingKeys = ["gps", "captureTime"]

    /// Reads the `exif:` block. Every mistake in it is recorded with the sink's others
    /// (``PluginOptions/record(_:)``), and the tag it concerns is left out.
    init(_ options: PluginOptions) throws {
        let valid = ExifTagName.allCases.map(\.rawValue)
        for key in options.keys where !valid.contains(key) && !Self.settingKeys.contains(key) {
            var message = "unknown EXIF tag '\(key)'"
            if let suggestion = closestMatch(to: key, in: valid + Self.settingKeys) { message += "; did you mean '\(suggestion)'?" }
            message += "; valid tags: \(valid.joined(separator: ", ")); settings: \(Self.settingKeys.joined(separator: ", "))"
            options.record(options.error(message, key: key))
            _ = options.contains(key)  // reported here, not again as an unknown key
        }
        for name in ExifTagName.allCases where name != .keywords {
            guard let text = try options.string(name.rawValue) else { continue }
            let template: PlaceholderTemplate
            do { template = try PlaceholderTemplate(text) } catch {
                options.record(options.error("'\(name.rawValue)': \(error)", key: name.rawValue))
                continue
            }
            if name == .imageUniqueID && template.isLiteral && !Self.isUniqueID(text) {
                options.record(options.error("'ImageUniqueID' must be 32 hex digits; use '{uuid}' for a new one per photo", key: name.rawValue))
                continue
            }
            tags[name] = template
        }
        let keywordTexts: [String]
        if let node = try options.node("Keywords"), case .scalar(let text, _) = node.value {
            keywordTexts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        } else {
            keywordTexts = try options.stringList("Keywords")
        }
        do { keywords = try keywordTexts.map { try PlaceholderTemplate($0) } } catch { options.record(options.error("'Keywords': \(error)", key: "Keywords")) }
        if let location = try options.section("gps") {
            let latitude = try location.double("latitude", in: -90...90)
            let longitude = try location.double("longitude", in: -180...180)
            guard let latitude, let longitude else {
                throw location.error("needs both 'latitude' and 'longitude' (decimal degrees, such as 52.5208)")
            }
            gps = GPSLocation(latitude: latitude, longitude: longitude, altitude: try location.double("altitude", in: -20_000...100_000))
            try location.rejectUnknownKeys()
        }
        let policy = try options.choice("captureTime", from: CaptureTime.allCases.map(\.rawValue), default: captureTime.rawValue)
        captureTime = CaptureTime(rawValue: policy)!
        try options.rejectUnknownKeys()
    }

    static func isUniqueID(_ text: String) -> Bool {
        text.count == 32 && text.allSatisfy(\.isHexDigit)
    }

    /// The metadata for one file.
    func metadata(_ values: TemplateValues, context: ShotContext) -> (PhotoMetadata, warnings: [String]) {
        var metadata = PhotoMetadata()
        var warnings: [String] = []
        func text(_ name: ExifTagName) -> String? { tags[name].map { $0.renderText(values) } }
        metadata.artist = text(.artist)
        metadata.copyright = text(.copyright)
        metadata.imageDescription = text(.imageDescription)
        metadata.software = text(.software)
        metadata.userComment = text(.userComment)
        if let id = text(.imageUniqueID) {
            if Self.isUniqueID(id) { metadata.imageUniqueID = id } else {
                warnings.append("ImageUniqueID '\(id.prefix(40))' is not 32 hex digits; not written")
            }
        }
        metadata.keywords = keywords.map { $0.renderText(values) }.filter { !$0.isEmpty }
        metadata.gps = gps
        metadata.jobIdentifier = context.label
        metadata.sequence = context.sequence
        switch captureTime {
        case .ifMissing: metadata.captureTime = context.captureTime
        case .always: metadata.captureTime = context.captureTime; metadata.replaceCameraTime = true
        case .never: break
        }
        return (metadata, warnings)
    }
}
