import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The shot list (`shotList:`, ``ShotList``): its products shot in turn. The session label
/// is the product being shot; a label set otherwise (a barcode scan, the page, a request)
/// jumps to that product; a product's planned photos taken, the label moves to the next
/// product not yet done. Leaving a product with fewer photos than planned is warned.
extension ShutterCoordinator {
    /// At the start: the first product's id becomes the label, unless one is set.
    func beginShotList() {
        guard let list = settings.shotList else { return }
        if label == nil, let first = list.products.first {
            label = first.id
            answerLog.label(label, by: "shot list", failure: nil)
        }
        if let (index, product) = list.product(label) {
            announce(product, at: index, of: list)
        } else {
            log.info("shot list \(list.file): \(list.products.count) product(s); the label '\(LogText.escaped(label ?? ""))' is none of them")
        }
    }

    /// The label was set from `previous` (rule 16): the shot list follows it.
    func followShotList(from previous: String?) {
        guard let list = settings.shotList, previous != label else { return }
        warnIfShort(previous, in: list)
        if let (index, product) = list.product(label) {
            announce(product, at: index, of: list)
        } else if let label {
            log.info("shot list: '\(LogText.escaped(label))' is not on it; its shots are not counted for a product")
        }
    }

    /// A stored photo with a product's label counts for it; the product whose plan this
    /// completes hands the label to the next product not done (after it, then from the top).
    func countForShotList(_ answer: ShutterAnswer) {
        guard let list = settings.shotList, answer.state == .photoSuccess, let (index, product) = list.product(answer.label) else { return }
        shotListTaken[product.id, default: 0] += 1
        let taken = shotListTaken[product.id] ?? 0
        guard taken == product.planned, label == product.id else { return }
        log.info("shot list: \(product.id) done (\(taken) of \(product.planned))", [("event", "shotListDone"), ("product", product.id)])
        let order = Array(list.products.indices[(index + 1)...]) + Array(list.products.indices[..<index])
        guard let next = order.first(where: { (shotListTaken[list.products[$0].id] ?? 0) < list.products[$0].planned }) else {
            log.info("shot list complete: all \(list.products.count) product(s) shot as planned", [("event", "shotListComplete")])
            return
        }
        label = list.products[next].id
        answerLog.label(label, by: "shot list", failure: nil)
        announce(list.products[next], at: next, of: list)
    }

    private func warnIfShort(_ id: String?, in list: ShotList) {
        guard let (_, product) = list.product(id) else { return }
        let taken = shotListTaken[product.id] ?? 0
        guard taken < product.planned else { return }
        log.warning("shot list: \(product.id) left with \(taken) of \(product.planned) photo(s) planned", [("event", "shotListShort"), ("product", product.id)])
    }

    private func announce(_ product: ShotList.Product, at index: Int, of list: ShotList) {
        let taken = shotListTaken[product.id] ?? 0
        let plan = product.sequence.map { "sequence '\($0)', \(product.planned) photo(s)" } ?? "\(product.planned) photo(s)"
        log.info("shot list: product \(index + 1) of \(list.products.count), \(product.id)\(product.name.isEmpty ? "" : " (\(LogText.escaped(product.name)))"): \(plan)"
                 + (taken > 0 ? ", \(taken) taken" : ""), [("event", "shotListProduct"), ("product", product.id)])
    }
}
