package bundle

import "github.com/amplidex/amplidex/discovery"

// Diagnostic codes of bundle repositories. They are stable: tools match on
// them. discovery.Codes, the registry of every code, lists each with its
// default severity, a one-line description and the fix; Codes is its part
// for bundle repositories.
const (
	// The text of a file.
	CodeYAMLSyntax         = discovery.CodeBundleYAMLSyntax
	CodeNotMapping         = discovery.CodeBundleNotMapping
	CodeFrontMatterMissing = discovery.CodeBundleFrontMatterMissing
	CodeUnterminated       = discovery.CodeBundleUnterminated
	CodeEncoding           = discovery.CodeBundleEncoding
	CodeTooLarge           = discovery.CodeBundleTooLarge
	CodeDuplicateKey       = discovery.CodeBundleDuplicateKey
	CodeMarkdownInYAML     = discovery.CodeBundleMarkdownInYAML
	CodeUnreadable         = discovery.CodeBundleUnreadable

	// Schemas.
	CodeUnknownKey   = discovery.CodeBundleUnknownKey
	CodeWrongType    = discovery.CodeBundleWrongType
	CodeMissingKey   = discovery.CodeBundleMissingKey
	CodeInvalidValue = discovery.CodeBundleInvalidValue

	// What the runtime loads without a word.
	CodeIncludeNoBundleKey  = discovery.CodeBundleIncludeNoBundleKey
	CodeIncludesUnderBundle = discovery.CodeBundleIncludesUnderBundle
	CodeAtInYAML            = discovery.CodeBundleAtInYAML
	CodeModuleNoID          = discovery.CodeBundleModuleNoID
	CodeMissingName         = discovery.CodeBundleMissingName
	CodeAgentNoMeta         = discovery.CodeBundleAgentNoMeta
	CodeDefaultProvider     = discovery.CodeBundleDefaultProvider

	// Composition and references.
	CodeIncludeUnresolved  = discovery.CodeBundleIncludeUnresolved
	CodeIncludeNotCached   = discovery.CodeBundleIncludeNotCached
	CodeIncludeCycle       = discovery.CodeBundleIncludeCycle
	CodeIncludePartial     = discovery.CodeBundleIncludePartial
	CodeIncludeTooDeep     = discovery.CodeBundleIncludeTooDeep
	CodeComposeFails       = discovery.CodeBundleComposeFails
	CodeAgentUnresolved    = discovery.CodeBundleAgentUnresolved
	CodeContextUnresolved  = discovery.CodeBundleContextUnresolved
	CodeMentionUnresolved  = discovery.CodeBundleMentionUnresolved
	CodeMentionPunctuation = discovery.CodeBundleMentionPunctuation
	CodeSettings           = discovery.CodeBundleSettings

	// Recipes, skills.
	CodeDuplicateStep = discovery.CodeBundleDuplicateStep
	CodeUnknownStep   = discovery.CodeBundleUnknownStep
	CodeNameMismatch  = discovery.CodeBundleNameMismatch
)

// Codes lists every code of bundle repositories, as discovery.Codes has
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

// codesOf returns the entries of discovery.Codes for codes, in order; a
// code it does not list has an entry with no summary (a test catches it).
func codesOf(codes ...string) []discovery.CodeInfo {
	out := make([]discovery.CodeInfo, len(codes))
	for i, code := range codes {
		out[i].Code = code
		for _, c := range discovery.Codes {
			if c.Code == code {
				out[i] = c
				break
			}
		}
	}
	return out
}
