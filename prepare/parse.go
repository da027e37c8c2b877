package prepare

import (
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/discovery/syntax"
	"go.yaml.in/yaml/v3"
)

// parsedDoc is a manifest or agent file parsed and checked against its
// schema by package discovery.
type parsedDoc struct {
	path string
	doc  *schema.Document
	// root is the front matter mapping; nil when there is none usable.
	root *yaml.Node
	// mentions are the @name:path mentions of the body.
	mentions []syntax.Mention
}

// parseDoc parses src, read from path, as a document of kind.
func parseDoc(path string, src []byte, kind schema.DocKind, opts schema.Options) *parsedDoc {
	doc := schema.ParseDocument(path, src, kind, opts)
	return &parsedDoc{
		path:     path,
		doc:      doc,
		root:     doc.Front,
		mentions: syntax.FindMentions(doc.Src, doc.BodyStart, doc.Lines),
	}
}

// diags returns the document's own diagnostics.
func (d *parsedDoc) diags() []diag.Diagnostic { return d.doc.Diagnostics }

// nodeRange returns where n is written in the file.
func (d *parsedDoc) nodeRange(n *yaml.Node) diag.Range { return d.doc.NodeRange(n) }
