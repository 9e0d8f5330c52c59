import Foundation
import ShutterPipeSupport

/// Where the search for a free name resumes when a name is already taken and the file name
/// template has no `{seq}`: `name.jpg`, then `name-2.jpg`, `name-3.jpg`, …
///
/// The first collision on a name looks once at its folder and starts after the highest
/// `name-N.ext` there; later ones start where the last search ended. So the thousandth
/// photo under one name tries one or two names, not a thousand.
struct CollisionSuffixes {
    /// How many taken names one file may meet before it fails: a bound for folders that
    /// other programs fill at the same time, never reached by our own photos.
    static let probesPerFile = 10_000

    private var next: [String: Int] = [:]

    /// The first suffix to try for `path`, the template's own name, which is taken.
    mutating func first(for path: String) -> Int {
        if let number = next[path] { return number }
        return Self.highestExisting(for: path) + 1
    }

    /// Records that `path` was stored with suffix `number`.
    mutating func used(_ number: Int, for path: String) {
        next[path] = number + 1
    }

    /// `name.jpg` → `name-2.jpg`.
    static func numbered(_ relative: String, _ number: Int) -> String {
        let ext = PathName.fileExtension(relative)
        let base = PathName.deletingExtension(relative)
        return ext.isEmpty ? "\(base)-\(number)" : "\(base)-\(number).\(ext)"
    }

    /// The highest N of the `name-N.ext` next to `path` (1 when there is none).
    private static func highestExisting(for path: String) -> Int {
        let ext = PathName.fileExtension(path)
        let base = PathName.lastComponent(PathName.deletingExtension(path)) + "-"
        let ending = ext.isEmpty ? "" : "." + ext
        let names = (try? FileManager.default.contentsOfDirectory(atPath: PathName.parent(path))) ?? []
        var highest = 1
        for name in names where name.hasPrefix(base) && name.hasSuffix(ending) && name.count > base.count + ending.count {
            let middle = name.dropFirst(base.count).dropLast(ending.count)
            if middle.allSatisfy(\.isASCII) && middle.allSatisfy(\.isNumber), let number = Int(middle) { highest = max(highest, number) }
        }
        return highest
    }
}
