import CShutterPipeSupport
import Foundation

/// SHA-256 of two messages at once, on one core (the x86 SHA extensions): about twice
/// the bytes a second of hashing them one after the other, since one message's rounds
/// form a chain that leaves the core half idle (sha256_pair.c). For a sink that hashes
/// every photo it stores: pair the photos.
public enum SHA256Pair {
    /// Whether this CPU can (SHA-NI, SSSE3, SSE4.1).
    public static let isSupported = shutterpipe_sha256_pair_supported() != 0
    /// Whether pairing is also faster here than one message after the other with OpenSSL
    /// (supported, and built optimised: a debug build's rounds are several times slower).
    public static let isFaster = shutterpipe_sha256_pair_fast() != 0

    /// The raw digests (32 bytes each) of `first` and `second`, each the concatenation of
    /// its pieces; nil where unsupported.
    public static func digests(_ first: [Data], _ second: [Data]) -> (first: [UInt8], second: [UInt8])? {
        guard isSupported else { return nil }
        var one = [UInt8](repeating: 0, count: 32), two = [UInt8](repeating: 0, count: 32)
        // The pieces' bytes stay pinned while the C function reads them.
        withPieces(first) { a in
            withPieces(second) { b in
                shutterpipe_sha256_pair(a.baseAddress, Int32(a.count), b.baseAddress, Int32(b.count), &one, &two)
            }
        }
        return (one, two)
    }

    /// Runs `body` with `chunks` as C pieces, each chunk's bytes borrowed for the call.
    private static func withPieces<R>(_ chunks: [Data], _ body: (UnsafeBufferPointer<shutterpipe_piece>) -> R) -> R {
        func borrow(_ index: Int, _ pieces: inout [shutterpipe_piece]) -> R {
            guard index < chunks.count else { return pieces.withUnsafeBufferPointer(body) }
            return chunks[index].withUnsafeBytes { bytes in
                pieces.append(shutterpipe_piece(bytes: bytes.baseAddress, length: UInt(bytes.count)))
                return borrow(index + 1, &pieces)
            }
        }
        var pieces: [shutterpipe_piece] = []
        pieces.reserveCapacity(chunks.count)
        return borrow(0, &pieces)
    }
}
