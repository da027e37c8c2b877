package discovery

import "strings"

// Module types, as lock files record them.
const (
	ModuleTool         = "tool"
	ModuleHook         = "hook"
	ModuleProvider     = "provider"
	ModuleOrchestrator = "orchestrator"
	ModuleContext      = "context"
	ModuleUnknown      = "unknown"
)

// moduleTypePrefixes maps a directory-name prefix to the module type it
// announces.
var moduleTypePrefixes = [...]struct{ prefix, typ string }{
	{"tool-", ModuleTool},
	{"hook-", ModuleHook},
	{"hooks-", ModuleHook},
	{"provider-", ModuleProvider},
	{"loop-", ModuleOrchestrator},
	{"orchestrator-", ModuleOrchestrator},
	{"context-", ModuleContext},
}

// ModuleType infers a module's type from the name of its directory:
// tool-* is "tool", hook-* and hooks-* are "hook", provider-* is "provider",
// loop-* and orchestrator-* are "orchestrator", context-* is "context", and
// anything else is "unknown". The match ignores case, and a leading
// "amplifier-module-" (the prefix of module repositories) is skipped, so
// amplifier-module-loop-streaming is an orchestrator.
func ModuleType(dirName string) string {
	name := strings.ToLower(dirName)
	name = strings.TrimPrefix(name, "amplifier-module-")
	for _, p := range moduleTypePrefixes {
		if strings.HasPrefix(name, p.prefix) && len(name) > len(p.prefix) {
			return p.typ
		}
	}
	return ModuleUnknown
}
