#if canImport(Glibc)
import Glibc
#endif
import CGPhoto2
import Foundation
@testable import GPhoto2Backend
@testable import GPhoto2Camera
import ShutterPipeFixtures
import ShutterPipeKit
import TestSupport
import Testing

@Suite("gphoto2 backend: finding and opening cameras, and its mistakes", .timeLimit(.minutes(2)))
struct CameraOpeningTests {
    @Test("a camera that refuses the connection answers exitedOrUnableToEnter")
    func refused() async throws {
        let folder = TemporaryDirectory("tether-refuse")
        let camera = try await FakeCamera(["--refuse"])
        let outcome = try await runTethered(camera, tetherConfig(camera, output: folder.file("out")), input: "enter\ncapture\n", in: folder)
        #expect(outcome.lines.first?.hasPrefix("exitedOrUnableToEnter noCamera: cannot open PTP/IP Camera at \(camera.portSpec)") == true, "\(outcome.stdout)")
        #expect(outcome.lines.dropFirst().first?.hasPrefix("photoFailed noCamera:") == true)
    }

    @Test("no camera of the model asked for: exitedOrUnableToEnter noCamera, saying what was detected and how to connect one")
    func noCameraFound() async throws {
        let folder = TemporaryDirectory("tether-none")
        let camera = try await FakeCamera()
        let config = tetherConfig(camera, output: folder.file("out")).replacingOccurrences(of: "  port: \(camera.portSpec)", with: "  model: No Such Camera 9000")
        let outcome = try await runTethered(camera, config, input: "enter\n", in: folder)
        let answer = outcome.lines.first ?? ""
        #expect(answer.hasPrefix("exitedOrUnableToEnter noCamera: no camera found matching model 'No Such Camera 9000' ("), "\(outcome.stdout)")
        #expect(answer.contains("`shutterpipe cameras` lists what is detected"), "\(answer)")
    }

    @Test("shutterpipe cameras lists model, port, serial, battery and card space, and why a camera cannot be opened")
    func camerasCommand() async throws {
        let folder = TemporaryDirectory("tether-list")
        let camera = try await FakeCamera(["--serial", "XYZ-42", "--battery", "64"])
        let outcome = try await shutterpipe(["cameras", "--port", camera.portSpec], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(outcome.status == 0)
        #expect(outcome.lines.first?.hasPrefix("MODEL") == true)
        let row = try #require(outcome.lines.first { $0.contains(camera.portSpec) })
        for field in ["PTP/IP Camera", "XYZ-42", "64%", "32.0 GB"] { #expect(row.contains(field), "\(row)") }
        // A port nobody listens on, held so that no camera started beside this test takes it.
        let closed = try RefusingPort()
        let spec = "ptpip:127.0.0.1:\(closed.port):\(closed.port)"
        let gone = try await shutterpipe(["cameras", "--port", spec], in: folder.path, environment: ["HOME": camera.home.path])
        #expect(gone.lines.contains { $0.hasPrefix("\(spec): cannot open PTP/IP Camera") }, "\(gone.stdout)")
    }

    @Test("serial: a camera with another serial number is not taken")
    func serialMismatch() async throws {
        let folder = TemporaryDirectory("tether-serial")
        let camera = try await FakeCamera(["--serial", "BODY-1"])
        let outcome = try await runTethered(camera, tetherConfig(camera, output: folder.file("out"), backend: "  serial: BODY-2"),
                                            input: "enter\n", in: folder)
        #expect(outcome.lines.first == "exitedOrUnableToEnter noCamera: the camera at \(camera.portSpec) has serial BODY-1, not BODY-2 (connect the camera with serial BODY-2, or change 'serial')")
        let right = try await runTethered(camera, tetherConfig(camera, output: folder.file("out"), backend: "  serial: BODY-1"),
                                          input: "enter\n", in: folder)
        #expect(right.lines.first == "enteredPhotoMode")
    }

    @Test("settings values match the camera's choices by number")
    func valueMatching() {
        #expect(SettingValues.choice(matching: "1/125", in: ["0.0080s", "0.0040s"]) == "0.0080s")
        #expect(SettingValues.choice(matching: "8", in: ["f/5.6", "f/8"]) == "f/8")
        #expect(SettingValues.choice(matching: "200", in: ["ISO 100", "ISO 200"]) == "ISO 200")
        #expect(SettingValues.choice(matching: "RAW + Large Fine JPEG", in: ["Large Fine JPEG", "RAW + Large Fine JPEG"]) == "RAW + Large Fine JPEG")
        #expect(SettingValues.choice(matching: "150", in: ["100", "200"]) == nil)
        #expect(SettingNames.widgetNames(for: "aperture").contains("f-number"))
    }

    @Test("libgphoto2 failures map to causes with the fix in the message")
    func errorMapping() {
        let claimed = CameraOpening.openError(GPhotoFailure(code: GP_ERROR_IO_USB_CLAIM, operation: "opening the camera"),
                                               model: "Nikon D750", port: "usb:001,004")
        #expect(claimed.cause == .permissionDenied)
        #expect(claimed.message.contains("held by another program"))
        #expect(claimed.fix?.contains("gio mount -s gphoto2") == true)
        #expect(claimed.fix?.contains("pkill -f gvfs-gphoto2-volume-monitor") == true)
        let noDriver = CameraOpening.openError(GPhotoFailure(code: GP_ERROR_MODEL_NOT_FOUND, operation: "x"), model: "Nikon D9", port: "usb:")
        #expect(noDriver.cause == .noCamera && noDriver.message.contains("no driver for 'Nikon D9'"))
        let badPort = CameraOpening.openError(GPhotoFailure(code: GP_ERROR_UNKNOWN_PORT, operation: "x"), model: "m", port: "usb:009,009")
        #expect(badPort.cause == .noCamera && badPort.fix?.contains("shutterpipe cameras") == true)
    }

    @Test("options: a malformed port is a config error")
    func badPort() {
        let node = configNode(["port": "127.0.0.1:15740"])
        #expect(throws: ConfigError.self) { try GPhoto2Backend.Options(PluginOptions(node, owner: "backend 'gphoto2'")) }
    }
}
