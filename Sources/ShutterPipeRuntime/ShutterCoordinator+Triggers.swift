import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// Starting the triggers: each runs in a task of its own and hands its events to the
/// ingress; when the last has returned, the input ends (rule 11).
extension ShutterCoordinator {
    func startTriggers(into ingress: Ingress) {
        let log = self.log
        let tasks = triggers.enumerated().map { index, trigger in
            let name = trigger.name
            let channel = EventChannel({ request in
                let admission = ingress.submit(request, from: index, name: name)
                // In the debug log (--verbose): each event as it arrives, before its answer.
                log.debug("\(request.event.rawValue) from \(name) received: \(admission)")
            }, settings: { request, answer in
                ingress.submit(request, from: index, answer: answer)
            }, label: { request, answer in
                ingress.submit(request, from: index, answer: answer)
            }, sequence: { request, answer in
                log.debug("sequence '\(LogText.escaped(request.name))' from \(name) received")
                ingress.submit(request, from: index, answer: answer)
            })
            return Task.detached {
                do {
                    try await trigger.source.run(delivering: channel)
                } catch is CancellationError {
                } catch {
                    let message = "trigger '\(trigger.name)' stopped: \(ShutterError.wrapping(error))"
                    log.error(message)
                    await self.recordTriggerFailure(message)
                }
            }
        }
        let stopping = triggerTasks.withLock { state -> Bool in
            state.tasks = tasks
            return state.stopping
        }
        if stopping { tasks.forEach { $0.cancel() } }
        Task {
            for task in tasks { await task.value }
            ingress.submitEndOfInput()
        }
    }

    func recordTriggerFailure(_ message: String) {
        status.triggerFailures.append(message)
    }
}
