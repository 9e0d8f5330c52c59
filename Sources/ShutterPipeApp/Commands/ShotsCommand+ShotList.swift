import Foundation
import ShutterPipeCatalogue
import ShutterPipeKit
import ShutterPipeRuntime
import ShutterPipeSupport

/// `shots shotlist`: what is done and what is left of the config's shot list, from the
/// catalogue (each product's photos are the shots that carry its id as their session label).
extension ShotsCommand {
    func shotList(_ context: CommandContext) throws -> Int32 {
        guard let pipeline = try pipeline(context) else {
            throw CommandFailure("shotlist reads the config's shotList: pass --config FILE (\(RunCommand.defaultConfig) is not in this folder)")
        }
        guard let list = pipeline.config.coordinator.shotList else {
            throw CommandFailure("the config has no shotList (a CSV of products: id,name,frames,sequence; docs/config.md)")
        }
        let catalogue = try Catalogue.open(at: try catalogueFile(context, pipeline: pipeline), create: false)
        var rows = [["ID", "NAME", "PLAN", "TAKEN", "LEFT"]]
        var done = 0, short: [String] = []
        for product in list.products {
            var filter = ShotFilter()
            filter.sessionLabel = product.id
            let taken = try catalogue.shots(filter).filter { $0.state != .failed }.count
            let left = max(0, product.planned - taken)
            if left == 0 { done += 1 } else if taken > 0 { short.append("\(product.id): \(taken) of \(product.planned)") }
            rows.append([product.id, product.name, product.sequence.map { "\($0) (\(product.planned))" } ?? String(product.planned), String(taken), left == 0 ? "done" : String(left)])
        }
        formatColumns(rows.map { $0.map(LogText.escaped) }).forEach(context.output.printLine)
        context.output.printLine("\(done) of \(list.products.count) product(s) done, \(list.products.count - done) left")
        for product in short { context.errors.printLine("shutterpipe shots: fewer photos than planned: \(product)") }
        return CommandContext.success
    }
}
