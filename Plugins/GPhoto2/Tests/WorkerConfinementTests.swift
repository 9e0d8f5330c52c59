#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeKit
import Testing
import TestSupport

/// A stand-in for a device that took libgphoto2 over: a library preloaded into the worker
/// (LD_PRELOAD, loaded before the worker confines itself) whose
/// `gp_camera_trigger_capture` first does what the file `SP_PROBE` says, then captures:
/// `probe` tries the files and network it must not reach and prints what happened;
/// `exec` starts a shell, a system call the filter forbids. The file is opened before
/// the confinement, so the test changes the order between shots.
private let probeSource = #"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int order = -1;
__attribute__((constructor)) static void opened(void) {
    const char *path = getenv("SP_PROBE");
    if (path) order = open(path, O_RDONLY | O_CLOEXEC);
}

static void attempt(const char *what, int result) {
    fprintf(stderr, "probe %s: %s\n", what, result >= 0 ? "allowed" : strerror(errno));
    if (result >= 0) close(result);
}

int gp_camera_trigger_capture(void *camera, void *context) {
    char said[16] = {0};
    if (order >= 0) pread(order, said, sizeof said - 1, 0);
    if (strncmp(said, "probe", 5) == 0) {
        attempt("read /etc/shadow", open("/etc/shadow", O_RDONLY));
        attempt("read secret", open(getenv("SP_SECRET"), O_RDONLY));
        char outside[4096];
        snprintf(outside, sizeof outside, "%s/escaped.txt", getenv("SP_OUTSIDE"));
        attempt("write outside", open(outside, O_WRONLY | O_CREAT, 0644));
        attempt("write inside", open("./inside.txt", O_WRONLY | O_CREAT, 0644));
        int tcp = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in other = {.sin_family = AF_INET, .sin_port = htons(atoi(getenv("SP_OTHER_PORT")))};
        inet_pton(AF_INET, "127.0.0.1", &other.sin_addr);
        attempt("connect elsewhere", tcp < 0 ? -1 : (connect(tcp, (struct sockaddr *)&other, sizeof other) == 0 ? dup(tcp) : -1));
        if (tcp >= 0) close(tcp);
        fflush(stderr);
    } else if (strncmp(said, "exec", 4) == 0) {
        char *arguments[] = {"/bin/sh", "-c", "true", NULL};
        execv("/bin/sh", arguments);
        fprintf(stderr, "probe exec: %s\n", strerror(errno));
    }
    int (*real)(void *, void *) = (int (*)(void *, void *))dlsym(RTLD_NEXT, "gp_camera_trigger_capture");
    return real(camera, context);
}
"""#

/// The probe library, built for this test.
private func buildProbe(in folder: TemporaryDirectory) async throws -> String {
    let source = folder.file("probe.c"), library = folder.file("probe.so")
    try probeSource.writeTestFile(source)
    let built = try await runProgram(["cc", "-shared", "-fPIC", "-o", library, source, "-ldl"])
    try #require(built.status == 0, "cc: \(built.text)")
    return library
}

/// A field of /proc/PID/status.
private func status(_ pid: pid_t, _ field: String) -> String? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    return text.split(separator: "\n").first { $0.hasPrefix(field + ":") }.map { $0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces) }
}

@Suite("the confined camera worker (real libgphoto2, a probe preloaded as a device that took it over)", .timeLimit(.minutes(3)))
struct WorkerConfinementTests {
    @Test("the worker has no_new_privs, a seccomp filter, no capabilities and, under root, another user; holds no descriptor of the output folder; cannot read /etc/shadow or a file outside its folder, write outside it, or connect elsewhere; the shot still works")
    func confined() async throws {
        let folder = TemporaryDirectory("confined")
        let probe = try await buildProbe(in: folder)
        let order = folder.file("order"), secret = folder.file("secret.txt"), outside = folder.file("outside")
        try "probe".writeTestFile(order)
        try "not the worker's".writeTestFile(secret)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        chmod(folder.path, 0o755); chmod(outside, 0o777); chmod(secret, 0o644)  // only the sandbox stands in the way
        let listener = try TCPListener()
        let camera = try await FakeCamera([])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config, "--verbose"], in: folder.path,
                                         environment: ["HOME": camera.home.path, "LD_PRELOAD": probe, "SP_PROBE": order, "SP_SECRET": secret,
                                                       "SP_OUTSIDE": outside, "SP_OTHER_PORT": String(listener.port)])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(3000))")
        let worker = try #require(try await workerPIDs(of: session).first)
        #expect(status(worker, "NoNewPrivs") == "1")
        #expect(status(worker, "Seccomp") == "2")
        #expect(status(worker, "CapEff") == "0000000000000000" && status(worker, "CapPrm") == "0000000000000000")
        if geteuid() == 0 {
            #expect(status(worker, "CapBnd") == "0000000000000000")
            let uid = status(worker, "Uid")?.split(separator: "\t").first.map(String.init)
            #expect(uid != "0" && uid != nil, "the worker of a root session runs as \(uid ?? "?")")
        }
        // Its descriptors: no folder at all, nothing of the output folder.
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker)/fd")) ?? []
        #expect(!descriptors.isEmpty)
        for descriptor in descriptors {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(worker)/fd/\(descriptor)")) ?? ""
            var info = stat()
            let isFolder = stat("/proc/\(worker)/fd/\(descriptor)", &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            #expect(!target.hasPrefix(folder.file("out")) && !isFolder, "the worker holds \(target)")
        }

        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        let log = outcome.stderr
        #expect(log.contains("probe read /etc/shadow: Permission denied"), "\(log.suffix(4000))")
        #expect(log.contains("probe read secret: Permission denied"))
        #expect(log.contains("probe write outside: Permission denied"))
        #expect(log.contains("probe write inside: allowed"))
        #expect(log.contains("probe connect elsewhere: Permission denied"))
        #expect(!FileManager.default.fileExists(atPath: "\(outside)/escaped.txt"))
        #expect(log.contains("confined: "), "the worker says what it is confined to")
        #expect(outcome.status == 0, "\(log.suffix(3000))")
    }

    @Test("a forbidden system call (exec) kills only the worker: that shot answers photoFailed cameraFailure, the worker restarts and the next shot is stored")
    func forbiddenCall() async throws {
        let folder = TemporaryDirectory("forbidden-call")
        let probe = try await buildProbe(in: folder)
        let order = folder.file("order")
        try "".writeTestFile(order)
        let camera = try await FakeCamera([])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let session = try await RunningProcess.start(["run", "--config", config], in: folder.path,
                                         environment: ["HOME": camera.home.path, "LD_PRELOAD": probe, "SP_PROBE": order])
        #expect(await shoot(session, answers: 1).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(3000))")
        let first = try #require(try await workerPIDs(of: session).first)
        // Written in place: the worker reads the file it opened.
        let handle = try #require(FileHandle(forWritingAtPath: order))
        try handle.write(contentsOf: Data("exec".utf8))
        let crashed = await shoot(session, answers: 2).last ?? "no answer"
        #expect(crashed.hasPrefix("photoFailed cameraFailure: the camera worker for 'camera' was killed by its sandbox (SIGSYS"), "\(crashed)\n\(session.stderrSoFar.suffix(3000))")
        try handle.truncate(atOffset: 0)
        try handle.close()
        #expect(await shoot(session, answers: 3).last?.hasPrefix("photoSuccess") == true, "\(session.stderrSoFar.suffix(3000))")
        let second = try #require(try await workerPIDs(of: session).first)
        #expect(second != first)
        session.closeInput()
        let outcome = await session.wait(timeout: .seconds(60))
        #expect(outcome.status == 4)  // one shot failed, by design
        #expect(outcome.lines.filter { $0.hasPrefix("photoSuccess") }.count == 2)
        let stored = ((try? FileManager.default.contentsOfDirectory(atPath: folder.file("out"))) ?? []).filter { $0.hasSuffix(".jpg") }
        #expect(stored.count == 2, "\(stored)")
    }
}

/// Runs a program as on a kernel without Landlock and seccomp: a filter of its own (set
/// before the exec, inherited) answers ENOSYS to Landlock and refuses new filters.
private let oldKernelSource = #"""
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 64;
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), seccomp_syscall_resolve_name("landlock_create_ruleset"), 0);
    seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), seccomp_syscall_resolve_name("seccomp"), 0);
    seccomp_rule_add(filter, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP));
    if (seccomp_load(filter) != 0) return 65;
    execv(argv[1], argv + 1);
    perror("execv");
    return 66;
}
"""#

extension WorkerConfinementTests {
    @Test("port drivers linked from a folder the confinement keeps out (IOLIBS of links, as a self-built libgphoto2 has): the shot's failure names a refused driver, where it points and the option; with workerReadPaths the shot is stored")
    func driversLinkedFromElsewhere() async throws {
        let folder = TemporaryDirectory("linked-drivers")
        let system = try #require(try FileManager.default.contentsOfDirectory(atPath: "/usr/lib").lazy
            .map { "/usr/lib/\($0)/libgphoto2_port" }.first { FileManager.default.fileExists(atPath: $0) })
        let version = try #require(try FileManager.default.contentsOfDirectory(atPath: system).first)
        let links = folder.file("links"), real = folder.file("built")
        for path in [links, real] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        for name in try FileManager.default.contentsOfDirectory(atPath: "\(system)/\(version)") where name.hasSuffix(".so") {
            try copyTestFile("\(system)/\(version)/\(name)", to: "\(real)/\(name)")
            try FileManager.default.createSymbolicLink(atPath: "\(links)/\(name)", withDestinationPath: "\(real)/\(name)")
        }
        let camera = try await FakeCamera([])
        let refused = try await runTethered(camera, tetherConfig(camera, output: folder.file("out")), input: "capture\n", in: folder, environment: ["IOLIBS": links])
        let answer = refused.lines.first { $0.hasPrefix("photo") } ?? ""
        #expect(answer.hasPrefix("photoFailed permissionDenied: cannot open") && answer.contains("Error loading a library: the confined camera worker cannot read \(links)/")
                && answer.contains("(a link to \(real)/") && answer.contains("'workerReadPaths: [\(real)]'") && answer.contains("confineWorkers: false"), "\(answer)\n\(refused.stderr.suffix(3000))")
        #expect(refused.stderr.contains("warning: the confined camera worker cannot read"), "said when the worker starts too: \(refused.stderr.suffix(3000))")

        let allowed = try await runTethered(camera, tetherConfig(camera, output: folder.file("out"), backend: "  workerReadPaths: [\(real)]"), input: "capture\n", in: folder,
                                            environment: ["IOLIBS": links])
        #expect(allowed.lines.contains { $0.hasPrefix("photoSuccess") }, "\(allowed.stdout)\n\(allowed.stderr.suffix(3000))")
        #expect(!allowed.stderr.contains("cannot read"))
    }

    @Test("on a kernel without Landlock and seccomp the worker runs unconfined by them, says so in a warning, and the shot is stored")
    func oldKernel() async throws {
        let folder = TemporaryDirectory("old-kernel")
        let source = folder.file("old-kernel.c"), wrapper = folder.file("old-kernel")
        try oldKernelSource.writeTestFile(source)
        let built = try await runProgram(["cc", "-o", wrapper, source, "-lseccomp"])
        try #require(built.status == 0, "cc: \(built.text)")
        let camera = try await FakeCamera([])
        let config = try writeConfig(tetherConfig(camera, output: folder.file("out")), in: folder)
        let outcome = try await runProgram([wrapper, try shutterpipeBinary(), "run", "--config", config], environment: ["HOME": camera.home.path],
                                           input: Data("capture\n".utf8), in: folder.path, timeout: .seconds(40))
        #expect(outcome.status == 0, "\(outcome.errors.suffix(3000))")
        #expect(outcome.text.contains("photoSuccess"))
        #expect(outcome.errors.contains("this kernel has no Landlock"), "\(outcome.errors.suffix(3000))")
        #expect(outcome.errors.contains("runs without Landlock and seccomp"))
    }
}

/// A TCP port on loopback that accepts connections (the kernel's backlog does), to tell a
/// connection the sandbox refuses from one nobody answers.
private final class TCPListener {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 8) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        try #require(bound, "cannot listen on loopback: \(String(cString: strerror(errno)))")
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}
