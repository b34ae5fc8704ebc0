package indexjob

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// progressInterval is the least time between progress reports.
const progressInterval = 2 * time.Second

// reporter writes a Job's progress, result or failure into its status
// ConfigMap with merge patches, which need no read and never conflict.
type reporter struct {
	client client.Client
	key    client.ObjectKey
	also   func(indexer.Progress)
	last   time.Time
}

// progress reports a stage's progress, at most once per interval except
// when a stage ends; a failed report is logged, not fatal.
func (r *reporter) progress(ctx context.Context, p indexer.Progress) {
	if r.also != nil {
		r.also(p)
	}
	if time.Since(r.last) < progressInterval && p.Done != p.Total {
		return
	}
	r.last = time.Now()
	v := Progress{Stage: p.Stage, Done: p.Done, Total: p.Total, UpdatedAt: r.last.UTC().Truncate(time.Second)}
	if err := r.write(ctx, ProgressKey, Encode(v)); err != nil {
		log.FromContext(ctx).Info("could not report progress", "error", err.Error())
	}
}

// write sets one key of the status ConfigMap.
func (r *reporter) write(ctx context.Context, key, value string) error {
	patch, _ := json.Marshal(map[string]any{"data": map[string]string{key: value}})
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = r.key.Namespace, r.key.Name
	return r.client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
}
