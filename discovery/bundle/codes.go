package bundle

import (
	"github.com/amplidex/amplidex/discovery/diag"
)

// Diagnostic codes of bundle repositories. They are stable: tools match on
// them. diag.Codes, the registry of every code, lists each with its
// default severity, a one-line description and the fix; Codes is its part
// for bundle repositories.
const (
	// The text of a file.
	CodeYAMLSyntax         = diag.CodeBundleYAMLSyntax
	CodeNotMapping         = diag.CodeBundleNotMapping
	CodeFrontMatterMissing = diag.CodeBundleFrontMatterMissing
	CodeUnterminated       = diag.CodeBundleUnterminated
	CodeEncoding           = diag.CodeBundleEncoding
	CodeTooLarge           = diag.CodeBundleTooLarge
	CodeDuplicateKey       = diag.CodeBundleDuplicateKey
	CodeMarkdownInYAML     = diag.CodeBundleMarkdownInYAML
	CodeUnreadable         = diag.CodeBundleUnreadable

	// Schemas.
	CodeUnknownKey   = diag.CodeBundleUnknownKey
	CodeWrongType    = diag.CodeBundleWrongType
	CodeMissingKey   = diag.CodeBundleMissingKey
	CodeInvalidValue = diag.CodeBundleInvalidValue

	// What the runtime loads without a word.
	CodeIncludeNoBundleKey  = diag.CodeBundleIncludeNoBundleKey
	CodeIncludesUnderBundle = diag.CodeBundleIncludesUnderBundle
	CodeAtInYAML            = diag.CodeBundleAtInYAML
	CodeModuleNoID          = diag.CodeBundleModuleNoID
	CodeMissingName         = diag.CodeBundleMissingName
	CodeAgentNoMeta         = diag.CodeBundleAgentNoMeta
	CodeDefaultProvider     = diag.CodeBundleDefaultProvider

	// Composition and references.
	CodeIncludeUnresolved  = diag.CodeBundleIncludeUnresolved
	CodeIncludeNotCached   = diag.CodeBundleIncludeNotCached
	CodeIncludeCycle       = diag.CodeBundleIncludeCycle
	CodeIncludePartial     = diag.CodeBundleIncludePartial
	CodeIncludeTooDeep     = diag.CodeBundleIncludeTooDeep
	CodeComposeFails       = diag.CodeBundleComposeFails
	CodeAgentUnresolved    = diag.CodeBundleAgentUnresolved
	CodeContextUnresolved  = diag.CodeBundleContextUnresolved
	CodeMentionUnresolved  = diag.CodeBundleMentionUnresolved
	CodeMentionPunctuation = diag.CodeBundleMentionPunctuation
	CodeSettings           = diag.CodeBundleSettings

	// Recipes, skills.
	CodeDuplicateStep = diag.CodeBundleDuplicateStep
	CodeUnknownStep   = diag.CodeBundleUnknownStep
	CodeNameMismatch  = diag.CodeBundleNameMismatch
)

// Codes lists every code of bundle repositories, as diag.Codes has
// them.
var Codes = codesOf(
	CodeYAMLSyntax,
	CodeNotMapping,
	CodeFrontMatterMissing,
	CodeUnterminated,
	CodeEncoding,
	CodeTooLarge,
	CodeDuplicateKey,
	CodeMarkdownInYAML,
	CodeUnreadable,
	CodeUnknownKey,
	CodeWrongType,
	CodeMissingKey,
	CodeInvalidValue,
	CodeIncludeNoBundleKey,
	CodeIncludesUnderBundle,
	CodeAtInYAML,
	CodeModuleNoID,
	CodeMissingName,
	CodeAgentNoMeta,
	CodeDefaultProvider,
	CodeIncludeUnresolved,
	CodeIncludeNotCached,
	CodeIncludeCycle,
	CodeIncludePartial,
	CodeIncludeTooDeep,
	CodeComposeFails,
	CodeAgentUnresolved,
	CodeContextUnresolved,
	CodeMentionUnresolved,
	CodeMentionPunctuation,
	CodeSettings,
	CodeDuplicateStep,
	CodeUnknownStep,
	CodeNameMismatch,
)

// codesOf returns the entries of diag.Codes for codes, in order; a
// code it does not list has an entry with no summary (a test catches it).
func codesOf(codes ...string) []diag.CodeInfo {
	out := make([]diag.CodeInfo, len(codes))
	for i, code := range codes {
		out[i].Code = code
		for _, c := range diag.Codes {
			if c.Code == code {
				out[i] = c
				break
			}
		}
	}
	return out
}
