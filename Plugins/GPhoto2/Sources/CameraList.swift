import CGPhoto2
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// What `shutterpipe cameras` shows for one camera.
public struct CameraReport: Sendable {
    /// The model libgphoto2 names.
    public var model: String
    /// The port it is on.
    public var port: String
    /// The serial number, battery and free card space, where the camera reports them.
    public var serial: String?
    public var battery: String?
    public var freeCardBytes: Int64?
    /// Why the camera could not be opened, if it could not.
    public var problem: String?
}

extension GPhoto2Backend {
    /// The cameras libgphoto2 detects, plus the ones at `ports` (network cameras are not
    /// detected), each opened briefly to read its serial, battery and card space.
    public static func listCameras(ports: [String]) async -> (cameras: [CameraReport], problem: String?) {
        let queue = BlockingQueue(label: "shutterpipe.gphoto2.list")
        return await queue.run {
            var found: [GPhotoCamera.Detected] = []
            var problem: String?
            do { found = try GPhotoCamera.detect() } catch { problem = "\(error)" }
            found += ports.map { GPhotoCamera.Detected(model: $0.hasPrefix("ptpip:") ? "PTP/IP Camera" : "", port: $0) }
            let reports = found.map { detected -> CameraReport in
                var report = CameraReport(model: detected.model, port: detected.port)
                do throws(GPhotoFailure) {
                    let camera = try GPhotoCamera(model: detected.model, port: detected.port)
                    defer { camera.close() }
                    report.serial = camera.serialNumber()
                    report.battery = (try? camera.setting("batterylevel"))?.value
                    report.freeCardBytes = camera.freeBytes()
                } catch {
                    report.problem = "\(openError(error, model: detected.model, port: detected.port))"
                }
                return report
            }
            return (reports, problem)
        }
    }
}
