#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import Synchronization

/// Memory for a whole photo's bytes, read from a file: a buffer that grows, and becomes a
/// `Data` without a copy.
///
/// A photo of megabytes in malloc's memory is a fresh mapping each time: each of its
/// 4 KiB pages faults in on the first write, and the kernel zeroes it first. Here that
/// costs 1.6 µs a page, 4 ms for a 10 MB JPEG, more than copying it from the page cache
/// (a 20-shot run of 10 MB files spent a third of its CPU in those faults). So a buffer
/// of ``largeFrom`` bytes or more is a mapping of its own, and once its `Data` is
/// released it is kept in a ``Pool`` for the next photo, whose pages are then there
/// already: no fault and no zeroing. Its old bytes are never shown: a `Data` covers only
/// what was written into it. Smaller buffers stay with malloc.
///
/// Transparent huge pages (`MADV_HUGEPAGE`) were measured too: no faster here (a virtual
/// machine whose fresh 2 MiB pages are slow to zero), so they are not asked for.
public struct PhotoMemory: ~Copyable {
    /// From this size a buffer is a mapping of its own, kept for reuse.
    public static let largeFrom = 4 << 20
    private static let step = 2 << 20

    /// Released mappings, kept for the next photos up to a number of bytes.
    public final class Pool: Sendable {
        /// The process's pool: 64 MB, a burst's few photos in flight at once.
        public static let shared = Pool(keeping: 64 << 20)

        /// The most bytes kept.
        public let limit: Int
        private let kept = Mutex<[(address: Int, length: Int)]>([])

        public init(keeping limit: Int) { self.limit = limit }

        /// How many bytes are kept now.
        public var keptBytes: Int { kept.withLock { $0.reduce(0) { $0 + $1.length } } }

        /// The smallest kept mapping of at least `length` bytes, taken out of the pool.
        fileprivate func take(_ length: Int) -> (UnsafeMutableRawPointer, Int)? {
            let found = kept.withLock { kept -> (address: Int, length: Int)? in
                guard let best = kept.indices.filter({ kept[$0].length >= length }).min(by: { kept[$0].length < kept[$1].length }) else { return nil }
                return kept.remove(at: best)
            }
            guard let found, let base = UnsafeMutableRawPointer(bitPattern: found.address) else { return nil }
            return (base, found.length)
        }

        /// Keeps a released mapping, or unmaps it when `limit` bytes are kept already.
        fileprivate func give(_ base: UnsafeMutableRawPointer, _ length: Int) {
            let keep = kept.withLock { kept -> Bool in
                guard kept.reduce(0, { $0 + $1.length }) + length <= limit else { return false }
                kept.append((Int(bitPattern: base), length))
                return true
            }
            if !keep { munmap(base, length) }
        }
    }

    /// The start of the buffer.
    public private(set) var base: UnsafeMutableRawPointer
    /// How many bytes it holds.
    public private(set) var capacity: Int
    /// The mapping's length, or 0 when the buffer is malloc's.
    private var mapped: Int
    /// Retained by the buffer (a trivial value, so that ``data(count:)`` may `discard`),
    /// released when it goes, or handed to its `Data`.
    private let pool: Unmanaged<Pool>

    /// A buffer of at least `capacity` bytes (not zeroed); nil when memory is short.
    public init?(capacity: Int, pool: Pool = .shared) {
        guard let (base, mapped) = Self.allocate(max(1, capacity), from: pool) else { return nil }
        self.base = base
        self.capacity = mapped > 0 ? mapped : max(1, capacity)
        self.mapped = mapped
        self.pool = .passRetained(pool)
    }

    deinit {
        let pool = self.pool.takeRetainedValue()
        if mapped > 0 { pool.give(base, mapped) } else { free(base) }
    }

    /// Grows the buffer to at least `capacity` bytes, keeping what it holds; false when
    /// memory is short (the buffer is then unchanged).
    public mutating func grow(to capacity: Int) -> Bool {
        guard capacity > self.capacity else { return true }
        if mapped == 0 && capacity < Self.largeFrom {
            guard let larger = realloc(base, capacity) else { return false }
            (base, self.capacity) = (larger, capacity)
            return true
        }
        // Rare (a file that grew while it was read): a new buffer, and a copy.
        let pool = self.pool.takeUnretainedValue()
        guard let (larger, length) = Self.allocate(capacity, from: pool) else { return false }
        larger.copyMemory(from: base, byteCount: self.capacity)
        if mapped > 0 { pool.give(base, mapped) } else { free(base) }
        (base, mapped, self.capacity) = (larger, length, length)
        return true
    }

    /// The first `count` bytes as a `Data` that owns the buffer from now on.
    public consuming func data(count: Int) -> Data {
        let (base, mapped, pool) = (self.base, self.mapped, self.pool.takeRetainedValue())
        discard self
        guard mapped > 0 else { return Data(bytesNoCopy: base, count: count, deallocator: .free) }
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pool.give(pointer, mapped) })
    }

    /// A buffer of `capacity` bytes and its mapping's length (0 for malloc's): a kept one
    /// when one is large enough, else a new mapping.
    private static func allocate(_ capacity: Int, from pool: Pool) -> (UnsafeMutableRawPointer, Int)? {
        guard capacity >= largeFrom else { return malloc(capacity).map { ($0, 0) } }
        // In steps of 2 MiB, so that a kept buffer serves the next photo of about the same
        // size (a camera's JPEGs vary by a few MB).
        let length = (capacity + step - 1) / step * step
        if let kept = pool.take(length) { return kept }
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), base != MAP_FAILED else { return nil }
        return (base, length)
    }
}
