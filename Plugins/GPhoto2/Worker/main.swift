// shutterpipe-camera-worker: one camera's libgphoto2, in a process of its own.
//
// The gphoto2 backend starts one per camera, with the socket it talks over as descriptor
// 3, standard input on /dev/null, and HOME on the camera's own settings folder. A crash of
// libgphoto2 ends this process, not the session: the backend answers the shot in flight
// and starts a new worker. Before anything else, it confines itself (WorkerSandbox): what
// a device that takes libgphoto2 over could do ends at this process. Not meant to be
// started by hand.
import Foundation
import GPhoto2Backend
import GPhoto2Camera

let confinement = WorkerSandbox.apply(WorkerConfinement.fromEnvironment())
signal(SIGPIPE, SIG_IGN)
exit(WorkerServer.run(confinement: confinement))
