#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

/// Durable writes of the small files a plugin keeps for itself (ledgers, journals, lists,
/// spooled copies): one way, never through a symbolic link. A photo's own durable write is
/// its sink's (the files sink's `DurableWriter` names photos without replacing them).
public enum DurableFile {
    /// Replaces the file at `path` with `bytes`, durably: they go into a new temporary
    /// file beside it (`.NAME.XXXXXX`, made by `mkstemp`, so with `O_EXCL`: a link planted
    /// at that name is never followed), which is fsynced, given `mode`, renamed over `path`
    /// (a rename replaces a link at `path` itself, never what it points at), and the folder
    /// is fsynced. On failure nothing is left behind and `path` is as it was; the error
    /// names the step.
    public static func replace(_ path: String, with bytes: Data, mode: mode_t = 0o600) throws(SystemError) {
        let folder = PathName.parent(path)
        var template = Array("\(folder.isEmpty ? "." : folder)/.\(PathName.lastComponent(path)).XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw SystemError("create a file in '\(folder)'") }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var failure: SystemError?
        do throws(SystemError) { try DescriptorIO.writeAll(bytes, to: descriptor) } catch { failure = SystemError("write '\(temporary)'", code: error.code) }
        if failure == nil && fchmod(descriptor, mode) != 0 { failure = SystemError("set the mode of '\(temporary)'") }
        if failure == nil && fsync(descriptor) != 0 { failure = SystemError("fsync '\(temporary)'") }
        close(descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = SystemError("rename '\(temporary)' to '\(path)'") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        try syncFolder(folder)
    }

    /// Appends `bytes` to the file at `path` (made with `mode` when missing; created
    /// empty when `bytes` is), never through a link, and fsyncs it; a new file's folder is
    /// fsynced too.
    public static func append(_ bytes: Data, to path: String, mode: mode_t = 0o600) throws(SystemError) {
        let existed = access(path, F_OK) == 0
        // O_NONBLOCK: a FIFO planted there fails at once instead of waiting for a reader.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemError("open '\(path)'") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw SystemError("append to '\(path)' (not a regular file)", code: EINVAL)
        }
        do throws(SystemError) { try DescriptorIO.writeAll(bytes, to: descriptor) } catch { throw SystemError("write '\(path)'", code: error.code) }
        guard fsync(descriptor) == 0 else { throw SystemError("fsync '\(path)'") }
        if !existed { try syncFolder(PathName.parent(path)) }
    }

    /// Makes the names in `folder` durable.
    public static func syncFolder(_ folder: String) throws(SystemError) {
        let descriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError("open the folder '\(folder)'") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemError("fsync the folder '\(folder)'") }
    }
}
