import Foundation
import ShutterPipeSupport

// The one way tests write and copy their files.
//
// Foundation's `Data.write(to:)`, `String.write(toFile:)` and, for some files,
// `FileManager.copyItem` end with an fsync on Linux, atomic or not. A test's files
// need no durability, and on a busy disk (CI, a build beside the suite) one fsync held
// a cooperative-pool thread for over 3 s: the pool watch failed the run on it.
// These write through the page cache and close: no fsync. ArchitectureTests checks
// that tests use nothing else.

/// Writes `bytes` to `path` (created 0666 less the umask, or truncated), without fsync.
public func writeTestFile(_ path: String, _ bytes: some DataProtocol) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else { throw TestFileError("cannot create \(path)", errno) }
    defer { close(descriptor) }
    do { try DescriptorIO.writeAll(Data(bytes), to: descriptor) } catch { throw TestFileError("cannot write \(path)", error.code) }
}

/// Copies the regular file `source` to `target`, which must not exist yet (as
/// `FileManager.copyItem` requires), keeping its permission bits; without fsync.
public func copyTestFile(_ source: String, to target: String) throws {
    let input = open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { throw TestFileError("cannot open \(source)", errno) }
    defer { close(input) }
    var status = stat()
    guard fstat(input, &status) == 0 else { throw TestFileError("cannot stat \(source)", errno) }
    let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, status.st_mode & 0o7777)
    guard output >= 0 else { throw TestFileError("cannot create \(target)", errno) }
    defer { close(output) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { throw TestFileError("cannot read \(source)", errno) }
        if count == 0 { break }
        do { try DescriptorIO.writeAll(buffer[0..<count], to: output) } catch { throw TestFileError("cannot write \(target)", error.code) }
    }
    // The umask may have narrowed the mode at creation; a copied program stays runnable.
    guard fchmod(output, status.st_mode & 0o7777) == 0 else { throw TestFileError("cannot set the mode of \(target)", errno) }
}

extension Data {
    /// Writes these bytes to `path`, without fsync: ``writeTestFile(_:_:)``.
    public func writeTestFile(_ path: String) throws { try TestSupport.writeTestFile(path, self) }
}

extension StringProtocol {
    /// Writes this text, UTF-8, to `path`, without fsync: ``writeTestFile(_:_:)``.
    public func writeTestFile(_ path: String) throws { try TestSupport.writeTestFile(path, Data(String(self).utf8)) }
}

/// A test file that could not be written, with the system's reason.
public struct TestFileError: Error, CustomStringConvertible {
    public let description: String
    init(_ what: String, _ code: Int32) { description = "\(what): \(String(cString: strerror(code)))" }
}
