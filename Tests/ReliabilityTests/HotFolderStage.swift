#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import ShutterPipeSupport
import TestSupport
import Testing

/// Who writes the hot folder in an attack: whoever holds the FTP account a Wi-Fi camera
/// uploads with.
enum HotFolderWriter: String, Sendable, CustomTestStringConvertible {
    /// The session's own user (no root needed): the mechanics of every refusal.
    case sessionUser
    /// A second user who owns the folder (0755), as an FTP server's account does.
    case folderOwner
    /// A second user who writes a shared folder (1777) that the session's user owns.
    case sharedWriter

    var testDescription: String {
        switch self {
        case .sessionUser: "written by the session's own user"
        case .folderOwner: "written by a second user who owns the folder"
        case .sharedWriter: "written by a second user in a shared folder it does not own"
        }
    }
}

/// One attack's stage: a hot folder, a private folder of the session's user beside it
/// (with a secret and an `authorized_keys`), and the attacker, who acts through a small
/// Python program run as its user. Names are passed as hex, so any bytes can be a name.
struct HotFolderStage {
    let folder: TemporaryDirectory
    let writer: HotFolderWriter
    let other: OtherUser?
    var incoming: String { folder.file("in") }
    var secret: String { folder.file("private/secret") }
    static let secretText = "TOP-SECRET-0123456789"

    static func make(_ label: String, _ writer: HotFolderWriter) async throws -> HotFolderStage {
        let folder = TemporaryDirectory(label)
        let other = writer == .sessionUser ? nil : try await OtherUser.make()
        try FileManager.default.createDirectory(atPath: folder.file("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.file("private"), withIntermediateDirectories: true)
        chmod(folder.path, 0o711)  // a second user may pass through to the hot folder
        chmod(folder.file("private"), 0o700)
        try secretText.writeTestFile(folder.file("private/secret"))
        chmod(folder.file("private/secret"), 0o600)
        try "ssh-ed25519 AAAAC3NzaOURS studio@ours\n".writeTestFile(folder.file("private/authorized_keys"))
        switch writer {
        case .sessionUser: break
        case .folderOwner:
            try other!.own(folder.file("in"))
            chmod(folder.file("in"), 0o755)
        case .sharedWriter:
            chmod(folder.file("in"), 0o1777)
        }
        return HotFolderStage(folder: folder, writer: writer, other: other)
    }

    /// The attacker's program: `OP HEXNAME [ARG]` in the hot folder.
    static let program = """
    import os, sys
    op, name = sys.argv[1], bytes.fromhex(sys.argv[2])
    os.chdir(sys.argv[3])
    if op == "write":
        data = sys.stdin.buffer.read()
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644); os.write(fd, data); os.close(fd)
    elif op == "link": os.symlink(sys.argv[4], name)
    elif op == "fifo": os.mkfifo(name, 0o644)
    elif op == "sparse":
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644); os.ftruncate(fd, int(sys.argv[4])); os.write(fd, b"\\xff\\xd8\\xff\\xe0"); os.close(fd)
    elif op == "rewrite":
        fd = os.open(name, os.O_WRONLY | os.O_APPEND); os.write(fd, b"ATTACKER"); os.close(fd)
    """

    /// The attacker does `op` on `name` (bytes) in `folder` (the hot folder by default).
    @discardableResult
    func attacker(_ op: String, _ name: [UInt8], _ argument: String? = nil, input: Data? = nil, in place: String? = nil) async throws -> ProgramOutput {
        let hex = name.map { String(format: "%02x", $0) }.joined()
        var arguments = ["/usr/bin/python3", "-c", Self.program, op, hex, place ?? incoming]
        if let argument { arguments.append(argument) }
        if let other { arguments = other.command(arguments) }
        return try await runProgram(arguments, environment: ["HOME": "/"], input: input ?? Data(), timeout: .seconds(60))
    }

    /// The attacker writes a real photo.
    func drop(_ name: String, shot: Int) async throws -> Data {
        let jpeg = SyntheticJPEG.make(width: 320, height: 240, shot: shot)
        let written = try await attacker("write", Array(name.utf8), input: jpeg)
        #expect(written.status == 0, "\(written.errors)")
        return jpeg
    }

    /// A hot-folder session writing into `out`, entered at start, with stdin.
    func session(originals: String = "leave", extra: String = "", sinks: String = "", catalogue: Bool = true) async throws -> RunningProcess {
        let config = try writeConfig("""
        version: 1
        session: hot
        backend: {type: hotfolder, folder: \(incoming), originals: \(originals), settle: 3s\(extra)}
        triggers: [{type: stdin}]
        \(catalogue ? "" : "catalogue: off")
        sinks:
          - {type: files, directory: \(folder.file("out")), filename: "{seq:03}-{name}.{ext}"}
        \(sinks)
        coordinator: {enterAtStart: true}
        """, in: folder)
        return try await RunningProcess.start(["run", "--config", config, "--no-status"], in: folder.path)
    }

    /// The stored photos' bytes, by name.
    var stored: [String: Data] {
        var found: [String: Data] = [:]
        for name in folder.names("out") where !name.hasPrefix(".") && !name.hasSuffix(".xmp") {
            found[name] = FileManager.default.contents(atPath: folder.file("out/\(name)"))
        }
        return found
    }

    /// Whether any stored file holds the secret.
    var secretLeaked: Bool {
        stored.values.contains { $0.range(of: Data(Self.secretText.utf8)) != nil }
    }

    static func end(_ session: RunningProcess) async -> Outcome {
        session.closeInput()
        return await session.wait(timeout: .seconds(60))
    }
}
