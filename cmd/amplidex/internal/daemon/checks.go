package daemon

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/amplidex/amplidex/discovery/catalog"
)

// checksKey is the index's key of the cross-reference results a clean stop
// leaves for the next run.
const checksKey = "checks"

// savedChecks are the cross-reference results of every View, as a clean
// stop left them: good for the next run while the index holds what it held
// then (tick) with the same schema options, and while no file is read
// again.
type savedChecks struct {
	Tick   uint64                     `json:"tick"`
	Schema byte                       `json:"schema"`
	Views  map[string]*catalog.Checks `json:"views"`
}

// saveChecks leaves the Views' cross-reference results for the next run;
// the writer has stopped and wrote everything (see saveSummary).
func (d *Daemon) saveChecks() {
	s := savedChecks{Tick: d.persist.store.Tick(), Schema: schemaStamp(d.cfg.Load().schema), Views: map[string]*catalog.Checks{}}
	for key, v := range d.cat.State().Views() {
		s.Views[key] = v.Checks()
	}
	b, err := json.Marshal(s)
	if err == nil {
		err = d.persist.store.SetMeta(checksKey, b)
	}
	if err != nil {
		d.log.Warn("checks for the next run not written", "err", err)
	}
}

// loadChecks returns the cross-reference results the last run left, when
// they are good for this one; nil otherwise.
func (d *Daemon) loadChecks() map[string]*catalog.Checks {
	began := d.now()
	b, err := d.persist.store.Meta(checksKey)
	if err != nil || b == nil {
		return nil
	}
	var s savedChecks
	if err := json.Unmarshal(b, &s); err != nil {
		d.log.Warn("checks of the last run not used", "err", fmt.Errorf("decode: %w", err))
		return nil
	}
	if s.Tick != d.persist.store.Tick() || s.Schema != schemaStamp(d.cfg.Load().schema) {
		d.log.Info("checks of the last run not used: the index or the schema options changed after they were written")
		return nil
	}
	d.log.Info("checks of the last run loaded", "views", len(s.Views), "bytes", len(b), "took", d.now().Sub(began).Round(time.Microsecond))
	return s.Views
}

// priorChecks is the catalog's Options.Prior: the results the last run
// left of the View of key, while this run has read no file again (every
// file has the contents its record had then).
func (d *Daemon) priorChecks(key string) *catalog.Checks {
	prior := d.prior.Load()
	if prior == nil || d.persist.cache.analyzed() != 0 {
		return nil
	}
	return (*prior)[key]
}
