package lsp

import (
	"encoding/json"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query"
)

// The subset of the Language Server Protocol (3.17) the server speaks. Field
// names follow the specification exactly.

// Position encodings, as initialize negotiates them.
const (
	encodingUTF16 = "utf-16"
	encodingUTF8  = "utf-8"
)

type initializeParams struct {
	ProcessID    *int   `json:"processId"`
	RootURI      string `json:"rootUri,omitempty"`
	Capabilities struct {
		General struct {
			PositionEncodings []string `json:"positionEncodings,omitempty"`
		} `json:"general"`
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		// Experimental is any JSON; amplidex reads amplidexStatus from an
		// object (see wantsStatus).
		Experimental json.RawMessage `json:"experimental,omitempty"`
		Workspace    struct {
			DidChangeWatchedFiles struct {
				DynamicRegistration bool `json:"dynamicRegistration"`
			} `json:"didChangeWatchedFiles"`
		} `json:"workspace"`
	} `json:"capabilities"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders,omitempty"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type initializeResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   serverInfo         `json:"serverInfo"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type serverCapabilities struct {
	PositionEncoding   string            `json:"positionEncoding"`
	TextDocumentSync   textDocumentSync  `json:"textDocumentSync"`
	CompletionProvider completionOptions `json:"completionProvider"`
	DefinitionProvider bool              `json:"definitionProvider"`
	HoverProvider      bool              `json:"hoverProvider"`
	ReferencesProvider bool              `json:"referencesProvider"`
	CodeActionProvider codeActionOptions `json:"codeActionProvider"`
}

type codeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds,omitempty"`
}

// Text document sync kinds.
const syncIncremental = 2

type textDocumentSync struct {
	OpenClose bool        `json:"openClose"`
	Change    int         `json:"change"`
	Save      saveOptions `json:"save"`
}

type saveOptions struct {
	IncludeText bool `json:"includeText"`
}

type completionOptions struct {
	TriggerCharacters []string `json:"triggerCharacters,omitempty"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int32  `json:"version"`
	Text       string `json:"text"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type didChangeParams struct {
	TextDocument   versionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                 `json:"contentChanges"`
}

// contentChange replaces Range with Text, or the whole text when Range is
// nil. RangeLength is deprecated and ignored.
type contentChange struct {
	Range *diag.Range `json:"range,omitempty"`
	Text  string      `json:"text"`
}

type didSaveParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Text         *string                `json:"text,omitempty"`
}

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// requestParams holds the params of every request about a place in a
// document: completion, definition and hover (a position), references (a
// position and whether to include the declaration) and codeAction (a
// range and the kinds asked for).
type requestParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     diag.Position          `json:"position"`
	Range        diag.Range             `json:"range"`
	Context      struct {
		IncludeDeclaration bool     `json:"includeDeclaration"`
		Only               []string `json:"only"`
	} `json:"context"`
}

type cancelParams struct {
	ID json.RawMessage `json:"id"`
}

// LSP diagnostic severities.
const (
	severityError       = 1
	severityWarning     = 2
	severityInformation = 3
)

type publishDiagnosticsParams struct {
	URI         string          `json:"uri"`
	Version     *int32          `json:"version,omitempty"`
	Diagnostics []lspDiagnostic `json:"diagnostics"`
}

type lspDiagnostic struct {
	Range    diag.Range `json:"range"`
	Severity int        `json:"severity"`
	Code     string     `json:"code,omitempty"`
	Source   string     `json:"source"`
	Message  string     `json:"message"`
}

type location struct {
	URI   string     `json:"uri"`
	Range diag.Range `json:"range"`
}

type markupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

type hover struct {
	Contents markupContent `json:"contents"`
}

type textEdit struct {
	Range   diag.Range `json:"range"`
	NewText string     `json:"newText"`
}

type lspCompletionItem struct {
	Label         string               `json:"label"`
	Kind          query.CompletionKind `json:"kind,omitempty"`
	Detail        string               `json:"detail,omitempty"`
	Documentation *markupContent       `json:"documentation,omitempty"`
	FilterText    string               `json:"filterText,omitempty"`
	InsertText    string               `json:"insertText,omitempty"`
	TextEdit      *textEdit            `json:"textEdit,omitempty"`
}

type completionList struct {
	IsIncomplete bool                `json:"isIncomplete"`
	Items        []lspCompletionItem `json:"items"`
}

type workspaceEdit struct {
	Changes map[string][]textEdit `json:"changes"`
}

type lspCodeAction struct {
	Title       string          `json:"title"`
	Kind        string          `json:"kind,omitempty"`
	Diagnostics []lspDiagnostic `json:"diagnostics,omitempty"`
	IsPreferred bool            `json:"isPreferred,omitempty"`
	Edit        workspaceEdit   `json:"edit"`
}
