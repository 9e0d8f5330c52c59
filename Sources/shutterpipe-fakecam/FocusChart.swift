import Foundation
import ShutterPipeFixtures
import Synchronization

/// Where the virtual lens is focused, in millimetres: read by the frame-making threads,
/// moved by SetDevicePropValue of FocusDistance.
final class LensPosition: Sendable {
    let millimetres: Atomic<UInt32>

    init(_ millimetres: UInt32) {
        self.millimetres = Atomic(millimetres)
    }
}

/// The virtual camera's lens and what it sees: a focus chart (a checkerboard of 8×8-pixel
/// squares over the middle of the frame, on a gradient), drawn as sharp as the lens is
/// focused on it. The lens sits at one of ``positions`` distances (FocusDistance, 0x5009:
/// 300 mm to 3300 mm in 50 mm steps); the chart is sharp at `--sharp-at`, and each step
/// away blurs it more (a box blur over the squares, half a square wider a step), so edge
/// detection finds fewest edges the farther the lens is off.
struct FocusChart: Sendable {
    /// The distances the lens can be at, in millimetres: FocusDistance's enumeration.
    static let positions: [UInt32] = (0...60).map { 300 + 50 * UInt32($0) }

    let sharpAt: UInt32

    /// The blur, in squares, with the lens at `distance`.
    func blurRadius(at distance: UInt32) -> Int {
        let steps = abs(Int(distance) - Int(sharpAt)) / 50
        return (steps + 1) / 2
    }

    /// A JPEG of the chart, `width`×`height`, with the lens at `distance`; `marker` moves
    /// a white bar a square a frame (a live frame that visibly changes).
    func jpeg(width: Int, height: Int, distance: UInt32, marker: Int? = nil, comment: String) -> Data {
        let columns = (width + 7) / 8, rows = (height + 7) / 8
        let radius = blurRadius(at: distance)
        // The chart's squares, blurred: a summed-area table makes every box average O(1).
        var sums = [Double](repeating: 0, count: (columns + 1) * (rows + 1))
        for row in 0..<rows {
            var line = 0.0
            for column in 0..<columns {
                line += Self.sharp(column, row, columns, rows)
                sums[(row + 1) * (columns + 1) + column + 1] = sums[row * (columns + 1) + column + 1] + line
            }
        }
        func blurred(_ column: Int, _ row: Int) -> Double {
            let left = max(column - radius, 0), right = min(column + radius, columns - 1)
            let top = max(row - radius, 0), bottom = min(row + radius, rows - 1)
            let width = columns + 1
            let total = sums[(bottom + 1) * width + right + 1] - sums[top * width + right + 1] - sums[(bottom + 1) * width + left] + sums[top * width + left]
            return total / Double((right - left + 1) * (bottom - top + 1))
        }
        return SyntheticJPEG.encode(width: width, height: height, comment: comment) { column, row in
            if let marker, (column - marker % columns + columns) % columns < 3, row < 3 { return (250, 128, 128) }
            return (blurred(column, row), 128, 128)
        }
    }

    /// The chart in focus: squares of 40 and 215 over the middle half, a gentle gradient
    /// around it.
    private static func sharp(_ column: Int, _ row: Int, _ columns: Int, _ rows: Int) -> Double {
        let inside = column >= columns / 4 && column < columns * 3 / 4 && row >= rows / 4 && row < rows * 3 / 4
        if inside { return (column + row) % 2 == 0 ? 40 : 215 }
        return 60 + 100 * Double(column) / Double(max(columns - 1, 1))
    }
}
