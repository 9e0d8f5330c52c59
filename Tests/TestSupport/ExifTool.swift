import Foundation

/// exiftool, the independent reader of what shutterpipe writes. Every call reads many
/// files in one process (each start of exiftool costs about 150 ms).
public enum ExifTool {
    /// Runs exiftool with `arguments` and returns its standard output.
    @discardableResult
    public static func run(_ arguments: [String]) async throws -> String {
        try await runProgram(["exiftool"] + arguments).text
    }

    /// Standard output as bytes (for `-b` extraction).
    public static func binary(_ arguments: [String]) async throws -> Data {
        try await runProgram(["exiftool"] + arguments).data
    }

    /// Every tag of every file (`-j -G1 -a -u -s`), by file path, values as strings.
    public static func tags(_ paths: [String], extra: [String] = []) async throws -> [String: [String: String]] {
        let output = try await run(["-j", "-G1", "-a", "-u", "-s"] + extra + paths)
        let objects = (try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]) ?? []
        var result: [String: [String: String]] = [:]
        for object in objects {
            guard let source = object["SourceFile"] as? String else { continue }
            result[source] = object.mapValues { "\($0)" }
        }
        return result
    }

    /// The `-validate` warnings and errors of every file, by path. Read from the text
    /// output: its JSON keeps only the first warning.
    public static func validationMessages(_ paths: [String]) async throws -> [String: Set<String>] {
        let output = try await run(["-validate", "-warning", "-error", "-a", "-G1", "-s"] + paths)
        var result: [String: Set<String>] = Dictionary(uniqueKeysWithValues: paths.map { ($0, []) })
        var current = paths.count == 1 ? paths[0] : ""
        for line in output.split(separator: "\n") {
            if line.hasPrefix("======== ") { current = String(line.dropFirst(9)); continue }
            guard let separator = line.range(of: " : ") else { continue }
            let name = line[..<separator.lowerBound]
            if name.contains("Warning") || name.contains("Error") {
                result[current, default: []].insert(String(line[separator.upperBound...]))
            }
        }
        return result
    }

    /// Groups and tags that reflect the file, not its metadata.
    public static let fileTags: Set<String> = ["SourceFile", "System", "File", "ExifTool", "Composite"]

    /// The tags of `original` that `tagged` lost or changed, ignoring the groups in
    /// `fileTags` and the tags named in `ours` (which shutterpipe sets on purpose).
    public static func damage(original: [String: String], tagged: [String: String], ours: Set<String>) -> [String] {
        var problems: [String] = []
        for (key, value) in original {
            let parts = key.split(separator: ":", maxSplits: 1)
            let group = parts.count == 2 ? String(parts[0]) : ""
            let name = String(parts.last ?? "")
            if fileTags.contains(group) || fileTags.contains(name) || group.hasPrefix("XMP") || ours.contains(name) { continue }
            if name == "Warning" || name == "Validate" { continue }
            guard let after = tagged[key] else { problems.append("lost \(key)"); continue }
            if after != value { problems.append("changed \(key): '\(value.prefix(60))' → '\(after.prefix(60))'") }
        }
        return problems.sorted()
    }
}

/// The tags shutterpipe writes, which may differ after tagging.
public let tagsShutterpipeWrites: Set<String> = [
    "Artist", "Copyright", "ImageDescription", "Software", "UserComment", "ImageUniqueID", "XPKeywords", "XPAuthor",
    "XPTitle", "XPComment", "DateTimeOriginal", "SubSecTimeOriginal", "OffsetTimeOriginal", "GPSVersionID",
    "GPSLatitudeRef", "GPSLatitude", "GPSLongitudeRef", "GPSLongitude", "GPSAltitudeRef", "GPSAltitude",
    "ExifByteOrder", "CurrentIPTCDigest",
]

/// The bytes from the SOS marker to the end of a JPEG (the scan data and any trailer).
public func bytesFromStartOfScan(_ data: Data) -> Data? {
    let bytes = [UInt8](data)
    var index = 2
    while index + 3 < bytes.count {
        guard bytes[index] == 0xFF else { return nil }
        var marker = index + 1
        while marker < bytes.count && bytes[marker] == 0xFF { marker += 1 }
        guard marker < bytes.count else { return nil }
        if bytes[marker] == 0xDA { return Data(bytes[(marker - 1)...]) }
        if (0xD0...0xD7).contains(bytes[marker]) || bytes[marker] == 0x01 { index = marker + 1; continue }
        guard marker + 2 < bytes.count else { return nil }
        index = marker + 1 + (Int(bytes[marker + 1]) << 8 | Int(bytes[marker + 2]))
    }
    return nil
}

/// The folder of real camera JPEGs: `SHUTTERPIPE_CAMERA_JPEGS`, else
/// `../shared/samples/camera-jpegs` next to the repository, else `nil`.
public var cameraSampleFolder: String? {
    if let path = ProcessInfo.processInfo.environment["SHUTTERPIPE_CAMERA_JPEGS"], !path.isEmpty { return path }
    let shared = URL(fileURLWithPath: repositoryRoot).deletingLastPathComponent().appendingPathComponent("shared/samples/camera-jpegs").path
    return FileManager.default.fileExists(atPath: shared) ? shared : nil
}
