import Foundation
import TestSupport
import Testing

/// shutterpipe as a Linux tool: the .deb that scripts/package-deb makes, unpacked into a
/// temporary root and run from there, outside the checkout, with the Swift toolchain out
/// of sight.
@Suite("install: the .deb unpacked and run outside the checkout", .timeLimit(.minutes(5)))
struct InstallTests {
    @Test("dpkg -x of the package: --version and the quickstart run without the toolchain; Debian dependencies declared; the plugins folder is searched without configuration; a systemd user unit",
          .requiresMountNamespace("it hides the toolchain under a tmpfs to prove the package runs without it"))
    func debianPackage() async throws {
        let folder = TemporaryDirectory("install-deb")
        let build = URL(fileURLWithPath: try shutterpipeBinary()).deletingLastPathComponent().path
        let deb = folder.file("shutterpipe.deb")
        let packaged = try await runProgram(["sh", "-c", "'\(repositoryRoot)/scripts/package-deb' --build-dir '\(build)' --output '\(deb)' --compression none 2>&1"])
        #expect(packaged.status == 0, "\(packaged.text)")
        let root = folder.file("root")
        #expect(try await runProgram(["dpkg", "-x", deb, root]).status == 0)
        let depends = try await runProgram(["dpkg-deb", "-f", deb, "Depends"]).text
        for library in ["libgphoto2-6", "libexif12", "libyaml-0-2", "libdbus-1-3", "libmicrohttpd12", "libturbojpeg0", "libmosquitto1", "libseccomp2"] {
            #expect(depends.contains(library), "\(depends)")
        }
        // Every system library the programs link themselves (the Swift runtime aside, which
        // the package carries) comes from a package it depends on: libjpeg was once linked
        // undeclared. (readelf is binutils', which the Swift toolchain links with.)
        let declared = Set(depends.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").first.map(String.init) ?? "" })
        for program in [try shutterpipeBinary(), "\(build)/shutterpipe-camera-worker"] {
            let needed = try await runProgram(["readelf", "-d", program]).text.matches(of: /\(NEEDED\)\s+Shared library: \[([^\]]+)\]/).map { String($0.output.1) }
            #expect(needed.contains { $0.hasPrefix("libjpeg.so") }, "\(program): \(needed)")
            let resolved = try await runProgram(["ldd", program]).text
            // The Swift runtime and the contract's library are the package's own copies.
            let carried = ["libswift", "libFoundation", "libdispatch", "libBlocksRuntime", "lib_FoundationICU", "libShutterPipeKit", "ld-linux"]
            for name in needed where !carried.contains(where: name.hasPrefix) {
                guard let path = resolved.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + " => /") })?
                    .split(separator: " ").first(where: { $0.hasPrefix("/") }) else {
                    Issue.record("\(program) needs \(name), which ldd does not find")
                    continue
                }
                // By the file's own name and folder (with /usr merged, dpkg may know it under /lib).
                let file = URL(fileURLWithPath: String(path)).resolvingSymlinksInPath()
                let owner = try await runProgram(["dpkg", "-S", "*/\(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)"]).text
                    .split(separator: ":").first.map(String.init) ?? ""
                #expect(declared.contains(owner) || owner.hasPrefix("libgcc") || owner.hasPrefix("libstdc++"),
                        "\(program) links \(name) of '\(owner)', which Depends does not name: \(depends)")
            }
        }
        // The camera workers' user is made at install (shutterpipe makes it too, when missing).
        let postinst = try await runProgram(["dpkg-deb", "-I", deb, "postinst"]).text
        #expect(postinst.contains("useradd --system") && postinst.contains("shutterpipe-camera"), "\(postinst)")
        #expect(try await runProgram(["sh", "-n", "-c", postinst]).status == 0)
        let unit = try String(contentsOfFile: "\(root)/usr/lib/systemd/user/shutterpipe@.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/shutterpipe run --no-status --config %h/.config/shutterpipe/%i.yaml"))
        #expect(FileManager.default.fileExists(atPath: "\(root)/usr/share/shutterpipe/default.yaml")
                && FileManager.default.fileExists(atPath: "\(root)/usr/share/shutterpipe/examples/mqtt.yaml"))

        // A third-party plugin dropped into the installed plugins folder is found as it is.
        try copyTestFile(try await examplePlugin(), to: "\(root)/usr/lib/shutterpipe/plugins/libShutterPipeManifest.so")

        // The toolchain's runtime folder hidden by an empty mount: only the package's own
        // copy of the Swift runtime can be used. Run in a folder outside the checkout.
        let linked = try await runProgram(["ldd", try shutterpipeBinary()]).text
        let runtime = try #require(linked.split(separator: "\n").first { $0.contains("libswiftCore.so") }?
            .split(separator: " ").first { $0.hasPrefix("/") }.map { URL(fileURLWithPath: String($0)).deletingLastPathComponent().path })
        let elsewhere = folder.file("studio")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let script = """
        mount -t tmpfs tmpfs \(runtime) && cd \(elsewhere) && \(root)/usr/bin/shutterpipe --version && \(root)/usr/bin/shutterpipe plugins && \
        printf 'enter\\ncapture\\nexit\\n' | \(root)/usr/bin/shutterpipe run --no-status --config \(root)/usr/share/shutterpipe/default.yaml
        """
        let ran = try await runProgram(["/usr/bin/unshare", "-rm", "sh", "-c", "(\(script)) 2>&1"])
        #expect(ran.status == 0, "\(ran.text)")
        #expect(ran.text.contains("shutterpipe 0.1.0") && ran.text.contains(" manifest ") && ran.text.contains("photoSuccess ./captures/"), "\(ran.text)")
        #expect(FileManager.default.fileExists(atPath: "\(elsewhere)/captures/session-0001.jpg"))
    }
}
