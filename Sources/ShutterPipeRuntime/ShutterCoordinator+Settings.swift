import ShutterPipeKit
import ShutterPipeSupport

/// Settings requests: rule 15 (setting changes are serialised with captures).
extension ShutterCoordinator {
    /// Handles a settings request in its turn among the events, and answers it.
    func handle(_ request: SettingsRequest, from trigger: Int, answer reply: @Sendable (SettingsAnswer) -> Void) async {
        let started = ContinuousClock.now
        var answer = await perform(request)
        answer.duration = ContinuousClock.now - started
        answerLog.settings(answer, by: triggers[trigger].name)
        reply(answer)
        observer?(status)  // entering photo mode for it changed the mode
    }

    /// Answers a settings request the full queue refused (rule 3).
    func refuse(_ request: SettingsRequest, from trigger: Int, answer reply: @Sendable (SettingsAnswer) -> Void) {
        let answer = SettingsAnswer(request: request, failure: ShutterError(
            .busy, "\(settings.queueLimit) events are already waiting; the settings were not changed",
            fix: "wait for the answers, or raise coordinator.queueLimit"))
        answerLog.settings(answer, by: triggers[trigger].name)
        reply(answer)
    }

    /// Reads or changes camera settings in the request's turn (rule 15): the pending store
    /// has been answered, no capture runs.
    private func perform(_ request: SettingsRequest) async -> SettingsAnswer {
        guard backendAbilities.contains(.cameraSettings), let control = backend as? any CameraSettingsControl else {
            let name = await backend.cameraName
            return SettingsAnswer(request: request, failure: ShutterError(
                .invalidConfiguration, "the backend '\(name)' has no camera settings to read or change",
                fix: "settings need a camera backend, such as gphoto2"))
        }
        if !status.inPhotoMode {
            guard settings.autoEnter else {
                return SettingsAnswer(request: request, failure: ShutterError(
                    .notInPhotoMode, "not in photo mode: the camera is not open", fix: "send enter first, or set coordinator.autoEnter: true"))
            }
            if let failure = await enterPhotoMode() { return SettingsAnswer(request: request, failure: failure) }
        }
        return await SettingsCall.run(request, on: control, timeout: settings.settingsTimeout)
    }
}

/// Session labels: rule 16.
extension ShutterCoordinator {
    /// Sets or clears the session label in its turn among the events, and answers.
    func handle(_ request: LabelRequest, from trigger: Int, answer reply: @Sendable (LabelAnswer) -> Void) {
        let text = request.label.trimmingCharacters(in: .whitespaces)
        let by = triggers[trigger].name + (request.origin.map { " (\($0))" } ?? "")
        if text.count > LabelRequest.maximumLength || text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            let failure = ShutterError(.invalidConfiguration, "a label is one line of at most \(LabelRequest.maximumLength) characters; this one has \(text.count)\(text.contains("\n") ? " and a line break" : "")",
                                       fix: "scan or send one code at a time")
            answerLog.label(nil, by: by, failure: failure)
            return reply(LabelAnswer(request: request, label: label, failure: failure))
        }
        label = text.isEmpty ? nil : text
        answerLog.label(label, by: by, failure: nil)
        reply(LabelAnswer(request: request, label: label))
    }
}
