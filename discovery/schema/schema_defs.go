package schema

import (
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// The schemas of profile, agent and bundle front matter, as data. The
// validator and JSON both read these tables; nothing writes them.
//
// Where the collection format spec, the reference loader and real files
// differ, the tables decide as follows:
//
//   - A module entry is a mapping {module, source, config}; a bare string
//     ("orchestrator: loop-basic", as some prose shows) is a type error, as
//     it is for the reference loader.
//   - null (an empty value) means "not set" for optional keys the
//     reference model types as optional (source, config, model, extends,
//     agents, exclude, the injection limits); for lists and required keys
//     it is a type error.
//   - A profile that extends another is partial: session.orchestrator,
//     session.context and their module ids are required only of a profile
//     that extends none. The merged profile is checked where profiles are
//     merged.
//   - Profile agents, and an agent's agents: "all", "none" or a list of
//     agent names, as PRODUCT.md rules and the reference model types
//     them. A mapping ({dirs: […]}, {include: […]}, {inline: …}), which
//     some collections write, is a type error: the reference loader
//     rejects it, so such a profile does not load.
//   - session may also hold injection_budget_per_turn and
//     injection_size_limit (integers or null), as bundled profiles do.
//   - ui and task are mappings whose known keys are type-checked and whose
//     other keys are accepted; their settings belong to the application.
//   - Agent keywords are a list of strings or one comma-separated string;
//     priority is a string or a number.
//   - Bundle: bundle and bundle.name are required; includes are bundle
//     URIs or {bundle: URI}; agents holds include plus inline definitions;
//     context holds include plus name → path entries; spawn is open.

var (
	anyValue     = &shape{kinds: syntax.TypeAny}
	stringValue  = &shape{kinds: syntax.TypeString}
	semverValue  = &shape{kinds: syntax.TypeString, semver: true}
	stringList   = &shape{kinds: syntax.TypeList, items: stringValue}
	boolValue    = &shape{kinds: syntax.TypeBool}
	intValue     = &shape{kinds: syntax.TypeInt}
	openMapping  = &shape{kinds: syntax.TypeMap, extra: anyValue}
	moduleSource = &shape{kinds: syntax.TypeString | syntax.TypeMap, extra: anyValue}
)

// moduleHint explains the shape of a module entry in type errors.
const moduleHint = "a module entry is a mapping such as {module: tool-web, source: git+https://…}"

// moduleEntry is one module in providers, tools, hooks or a bundle session.
var moduleEntry = &shape{kinds: syntax.TypeMap, hint: moduleHint, fields: []*field{
	{name: "module", shape: stringValue, required: true, doc: "Module id, such as tool-web."},
	{name: "source", shape: moduleSource, nullable: true, doc: "Where the module comes from: git+URL@ref[#subdirectory=…], a file:// URL, a local path, or a mapping."},
	{name: "config", shape: openMapping, nullable: true, doc: "Module-specific configuration."},
}}

// sessionModule is a profile's orchestrator or context: a module entry
// whose id a profile that extends another may leave to its parent.
var sessionModule = &shape{kinds: syntax.TypeMap, hint: moduleHint, fields: []*field{
	{name: "module", shape: stringValue, rootOnly: true, doc: "Module id, such as loop-streaming; required unless the profile extends another."},
	{name: "source", shape: moduleSource, nullable: true, doc: "Where the module comes from: git+URL@ref[#subdirectory=…], a file:// URL, a local path, or a mapping."},
	{name: "config", shape: openMapping, nullable: true, doc: "Module-specific configuration."},
}}

var moduleList = &shape{kinds: syntax.TypeList, items: moduleEntry}

// agentRefs selects agents by name: "all", "none", or a list of names.
var agentRefs = &shape{kinds: syntax.TypeString | syntax.TypeList, enum: []string{"all", "none"}, items: stringValue,
	hint: "list the agents by name, or write all; the reference loader rejects a mapping such as {dirs: […]}"}

// agentFields are the keys of an agent file, shared by collection agents,
// bundle agents and a profile's inline agents.
func agentFields(extra ...*field) []*field {
	fs := []*field{
		{name: "meta", shape: agentMeta, doc: "Agent metadata: name and description."},
		{name: "name", shape: stringValue, unless: "meta", doc: "Agent name (when there is no meta); matches the file name."},
		{name: "description", shape: stringValue, unless: "meta", doc: "What the agent is for (when there is no meta)."},
		{name: "model", shape: stringValue, nullable: true, doc: "Model to use; usually inherit."},
		{name: "capabilities", shape: stringList, nullable: true, doc: "What the agent can do."},
		{name: "keywords", shape: &shape{kinds: syntax.TypeString | syntax.TypeList, items: stringValue}, nullable: true, doc: "Words that select the agent: a list, or one comma-separated string."},
		{name: "priority", shape: &shape{kinds: syntax.TypeString | syntax.TypeNumber}, nullable: true, doc: "Selection priority."},
		{name: "config", shape: openMapping, nullable: true, doc: "Agent configuration."},
		{name: "providers", shape: moduleList, doc: "Provider module overrides."},
		{name: "tools", shape: moduleList, doc: "Tool module overrides."},
		{name: "hooks", shape: moduleList, doc: "Hook module overrides."},
		{name: "session", shape: openMapping, nullable: true, doc: "Session configuration overrides."},
		{name: "system", shape: systemConfig, nullable: true, doc: "System instruction."},
		{name: "agents", shape: agentRefs, nullable: true, doc: "Agents this agent may delegate to."},
	}
	return append(fs, extra...)
}

var agentMeta = &shape{kinds: syntax.TypeMap, fields: []*field{
	{name: "name", shape: stringValue, doc: "Agent name; matches the file name."},
	{name: "description", shape: stringValue, required: true, doc: "What the agent is for, shown when choosing agents."},
}}

var systemConfig = &shape{kinds: syntax.TypeMap, fields: []*field{
	{name: "instruction", shape: stringValue, required: true, doc: "System instruction text."},
}}

// agentSchema is the front matter of agents/*.md in a collection.
var agentSchema = &shape{kinds: syntax.TypeMap, fields: agentFields()}

// bundleAgentSchema is the front matter of an agent shipped in a bundle.
var bundleAgentSchema = &shape{kinds: syntax.TypeMap, fields: agentFields(
	&field{name: "model_role", shape: &shape{kinds: syntax.TypeString | syntax.TypeList, items: stringValue}, nullable: true, doc: "Model roles, in order of preference, such as [general, fast]."},
)}

var profileMeta = &shape{kinds: syntax.TypeMap, fields: []*field{
	{name: "name", shape: stringValue, required: true, doc: "Profile name; matches the file name."},
	{name: "version", shape: semverValue, required: true, doc: "Semantic version X.Y.Z."},
	{name: "description", shape: stringValue, required: true, doc: "What the profile is for."},
	{name: "model", shape: stringValue, nullable: true, doc: "Model as provider/model."},
	{name: "extends", shape: stringValue, nullable: true, doc: "Parent profile: collection:name, collection:profiles/name.md, or a name in the same collection."},
}}

var profileSession = &shape{kinds: syntax.TypeMap, fields: []*field{
	{name: "orchestrator", shape: sessionModule, rootOnly: true, doc: "Orchestrator module; required unless the profile extends another."},
	{name: "context", shape: sessionModule, rootOnly: true, doc: "Context manager module; required unless the profile extends another."},
	{name: "injection_budget_per_turn", shape: intValue, nullable: true, doc: "Most tokens hooks may inject per turn; null for no limit."},
	{name: "injection_size_limit", shape: intValue, nullable: true, doc: "Largest single injection; null for no limit."},
}}

var profileSchema = &shape{kinds: syntax.TypeMap, fields: []*field{
	{name: "profile", shape: profileMeta, required: true, doc: "Profile metadata."},
	{name: "session", shape: profileSession, rootOnly: true, doc: "Session modules; required unless the profile extends another."},
	{name: "providers", shape: moduleList, doc: "LLM provider modules."},
	{name: "tools", shape: moduleList, doc: "Tool modules."},
	{name: "hooks", shape: moduleList, doc: "Hook modules."},
	{name: "agents", shape: agentRefs, nullable: true, doc: `Agents to load: "all", "none", or a list of names.`},
	{name: "exclude", shape: &shape{kinds: syntax.TypeMap, extra: &shape{kinds: syntax.TypeString | syntax.TypeList | syntax.TypeMap, enum: []string{"all"}, items: stringValue, extra: anyValue}}, nullable: true,
		doc: `Parts of the parent to leave out: section: "all", a list of ids, or a nested mapping.`},
	{name: "ui", shape: &shape{kinds: syntax.TypeMap, extra: anyValue, fields: []*field{
		{name: "show_thinking_stream", shape: boolValue, doc: "Show the model's thinking as it streams."},
		{name: "show_tool_lines", shape: intValue, doc: "How many lines of tool output to show."},
		{name: "show_token_usage", shape: boolValue, doc: "Show token usage."},
	}}, nullable: true, doc: "Display settings."},
	{name: "task", shape: &shape{kinds: syntax.TypeMap, extra: anyValue, fields: []*field{
		{name: "max_recursion_depth", shape: intValue, doc: "How deep agents may delegate to agents."},
	}}, nullable: true, doc: "Task delegation settings."},
}}

// BundleDefaultProviderMessage is the message of the bundle/load-failed
// (in the editor) and bundle/missing-default-provider (check, prepare)
// diagnostic for a manifest whose default_provider is missing or not a
// string. It says what is wrong in the manifest and how to fix it: the
// agent runtime's own message sends a bundle's author to reinstall the
// runtime, which fixes nothing of theirs.
const BundleDefaultProviderMessage = "bundle.md needs a top-level default_provider string: add `default_provider: <provider>`, such as `default_provider: anthropic`, to its front matter"

var bundleSchema = &shape{kinds: syntax.TypeMap, fields: []*field{
	{name: "bundle", shape: &shape{kinds: syntax.TypeMap, fields: []*field{
		{name: "name", shape: stringValue, required: true, doc: "Bundle name: the namespace of its @mentions and agents."},
		{name: "version", shape: semverValue, doc: "Semantic version X.Y.Z."},
		{name: "description", shape: stringValue, doc: "What the bundle is for."},
	}}, required: true, doc: "Bundle metadata."},
	{name: "default_provider", shape: stringValue, required: true, code: diag.CodeBundleLoadFailed, message: BundleDefaultProviderMessage,
		doc: "Provider selected when the host names none, such as anthropic."},
	{name: "providers", shape: moduleList, doc: "Provider modules, installed when the bundle is prepared."},
	{name: "session", shape: &shape{kinds: syntax.TypeMap, fields: []*field{
		{name: "orchestrator", shape: moduleEntry, doc: "Orchestrator module."},
		{name: "context", shape: moduleEntry, doc: "Context manager module."},
		{name: "provider", shape: moduleEntry, doc: "Default provider module mounted at session start."},
		{name: "raw", shape: boolValue, doc: "Pass the session configuration through unchanged."},
	}}, doc: "Session modules."},
	{name: "tools", shape: moduleList, doc: "Tool modules."},
	{name: "hooks", shape: moduleList, doc: "Hook modules."},
	{name: "agents", shape: &shape{kinds: syntax.TypeMap, extra: openMapping, fields: []*field{
		{name: "include", shape: stringList, doc: "Names of the agents the bundle ships (agents/<name>.md) or includes (bundle:name)."},
	}}, doc: "Agents: include lists names; other keys define agents inline."},
	{name: "includes", shape: &shape{kinds: syntax.TypeList, items: &shape{kinds: syntax.TypeString | syntax.TypeMap, fields: []*field{
		{name: "bundle", shape: stringValue, required: true, doc: "Bundle URI."},
	}}}, doc: "Bundles composed into this one."},
	{name: "context", shape: &shape{kinds: syntax.TypeMap, extra: stringValue, fields: []*field{
		{name: "include", shape: stringList, doc: "Context files to load."},
	}}, doc: "Context files: include lists them; other keys map a name to a path."},
	{name: "spawn", shape: openMapping, doc: "Settings for spawned sub-sessions, such as exclude_tools."},
}}
