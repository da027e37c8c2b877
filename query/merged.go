package query

// MergedProfile is a profile's effective front matter as an editor shows
// it (the analyze question OpMergedProfile): its whole extends chain
// merged as resolve.Set.Effective merges it, over the unsaved buffers,
// written as YAML with a comment on each key naming the profiles of the
// chain that set it.
type MergedProfile struct {
	// Text is the document to show: a header of comments (the chain,
	// and why it is incomplete when it is), then the merged front matter
	// between "---" lines.
	Text string `json:"text"`
	// Complete is false when the chain does not reach a profile that
	// extends none, or a profile in it has no usable front matter: Text
	// then merges only what resolved, or nothing.
	Complete bool `json:"complete"`
	// Problem says why the chain is incomplete; "" when it is complete.
	Problem string `json:"problem,omitempty"`
	// Chain is the extends chain, the profile asked about first.
	Chain []ChainLink `json:"chain"`
	// Sources say, for each key of the merged front matter, which
	// profiles of the chain set it, in the order of Text.
	Sources []KeySource `json:"sources,omitempty"`
}

// ChainLink is one profile of an extends chain.
type ChainLink struct {
	// ID is the profile as extends names it: collection:name.
	ID string `json:"id"`
	// Path is its file (for the profile asked about, the buffer's path).
	Path string `json:"path"`
}

// KeySource says where one key of a merged profile comes from.
type KeySource struct {
	// Line is the key's line in Text, 0-based.
	Line int `json:"line"`
	// Key is the key's path from the top of the front matter; an entry of
	// providers, tools or hooks is named by its module id.
	Key []string `json:"key"`
	// From are the IDs of the profiles that set the key (for a mapping,
	// some key below it), the profile asked about first.
	From []string `json:"from"`
}
