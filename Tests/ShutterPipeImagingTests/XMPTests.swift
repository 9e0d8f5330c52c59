import Foundation
import ShutterPipeImaging
import Testing

/// The one XMP model: packets written by ``XMPPacket`` and read back by ``XMPDocument``,
/// and edits made in place through the document.
@Suite("XMP: one writer, one reader, edits in place")
struct XMPTests {
    @Test("what the writer puts in a packet, the reader finds, hostile text included")
    func writtenThenRead() throws {
        let hostile = "x\" xmp:Rating=\"5\" <b>&amp;\u{1}"
        let packet = XMPPacket([
            .init(.xmp, "Label", .text(hostile)),
            .init(.dc, "subject", .bag(["studio", hostile])),
            .init(.dc, "creator", .sequence(["Ada"])),
            .init(.dc, "rights", .alternative("© Ada")),
            .init(.shutterpipeSequence, "Frame", .text("3")),
        ])
        for wrapped in [false, true] {
            let text = packet.text(wrapped: wrapped)
            #expect(text.hasPrefix("<?xpacket") == wrapped)
            let document = try XMPDocument(text)
            // The control character XML forbids is dropped; the rest comes back as written.
            let expected = "x\" xmp:Rating=\"5\" <b>&amp;"
            #expect(document.property(XMPNamespace.xmp.uri, "Label") == expected)
            #expect(document.property(XMPNamespace.xmp.uri, "Rating") == nil)
            #expect(document.list(XMPNamespace.dc.uri, "subject")?.items == ["studio", expected])
            #expect(document.list(XMPNamespace.dc.uri, "creator")?.items == ["Ada"])
            #expect(document.list(XMPNamespace.dc.uri, "rights")?.items == ["© Ada"])
            #expect(document.property(XMPNamespace.shutterpipeSequence.uri, "Frame") == "3")
        }
    }

    @Test("a property set, changed and removed in place leaves every other byte as it was")
    func editsInPlace() throws {
        let foreign = "<darktable:history><rdf:Seq><rdf:li darktable:operation=\"exposure\"/></rdf:Seq></darktable:history>"
        let original = XMPPacket([.init(.xmp, "Rating", .text("2"))], declaring: [.xmp]).text(wrapped: false)
            .replacingOccurrences(of: "  </rdf:Description>", with: "   \(foreign)\n  </rdf:Description>")
            .replacingOccurrences(of: "xmlns:xmp=", with: "xmlns:darktable=\"http://darktable.sf.net/\"\n    xmlns:xmp=")
        var text = try XMPDocument(original).setting(.xmp, "Rating", to: "5")
        #expect(text == original.replacingOccurrences(of: "xmp:Rating=\"2\"", with: "xmp:Rating=\"5\""))
        text = try XMPDocument(text).settingList(.dc, "subject", to: .bag(["a", "b"]))
        text = try XMPDocument(text).settingList(.dc, "subject", to: .bag(["c"]))
        let document = try XMPDocument(text)
        #expect(document.list(XMPNamespace.dc.uri, "subject")?.items == ["c"])
        #expect(text.contains(foreign))
        // Removing both gives back the original but for the new namespace's declaration and the rating.
        text = try XMPDocument(text).settingList(.dc, "subject", to: .bag([]))
        text = try XMPDocument(text).setting(.xmp, "Rating", to: nil)
        #expect(try XMPDocument(text).property(XMPNamespace.xmp.uri, "Rating") == nil)
        #expect(text.contains(foreign))
        #expect(try XMPDocument(text).list(XMPNamespace.dc.uri, "subject") == nil)
    }

    @Test("a prefix another namespace holds is never reused: the marks' namespace beside the sequence's")
    func prefixesDoNotCollide() throws {
        // The files sink binds `shutterpipe` to the sequence namespace; a pick added later
        // lives in the marks' namespace under a free prefix.
        let sidecar = XMPPacket([.init(.shutterpipeSequence, "Frame", .text("1"))]).text(wrapped: false)
        let marked = try XMPDocument(sidecar).setting(.shutterpipeMarks, "Pick", to: "1")
        let document = try XMPDocument(marked)
        #expect(document.property(XMPNamespace.shutterpipeMarks.uri, "Pick") == "1")
        #expect(document.property(XMPNamespace.shutterpipeSequence.uri, "Frame") == "1")
        #expect(marked.contains("xmlns:shutterpipe2=\"http://ns.shutterpipe.org/1.0/\""))
    }

    @Test("a packet without a description takes no change, and says why")
    func noDescription() throws {
        let bare = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"/></x:xmpmeta>"
        #expect(throws: XMPDocument.EditError.self) { try XMPDocument(bare).setting(.xmp, "Rating", to: "1") }
        #expect(throws: XMPDocument.EditError.self) { try XMPDocument(bare).settingList(.dc, "subject", to: .bag(["a"])) }
        // Removing what is not there changes nothing.
        #expect(try XMPDocument(bare).setting(.xmp, "Rating", to: nil) == bare)
    }
}
