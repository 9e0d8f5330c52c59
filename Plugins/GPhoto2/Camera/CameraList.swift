import CGPhoto2
import GPhoto2Backend

/// `shutterpipe cameras`, in the worker: the cameras libgphoto2 detects, plus the ones at
/// the given ports (network cameras are not detected), each opened briefly to read its
/// serial, battery and card space.
enum CameraList {
    static func reports(ports: [String]) -> (cameras: [CameraReport], problem: String?) {
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
                report.battery = (try? camera.setting(named: "batterylevel"))?.value
                report.freeCardBytes = camera.freeBytes()
            } catch {
                report.problem = "\(CameraOpening.openError(error, model: detected.model, port: detected.port))"
            }
            return report
        }
        return (reports, problem)
    }
}
