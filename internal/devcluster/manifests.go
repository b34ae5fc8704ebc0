package devcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// SampleFiles are the files of config/samples, in the order
// config/samples/kustomization.yaml lists them.
func (e *Env) SampleFiles() ([]string, error) {
	dir := filepath.Join(e.Root, "config", "samples")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("reading the samples' kustomization: %w", err)
	}
	files := make([]string, len(k.Resources))
	for i, r := range k.Resources {
		files[i] = filepath.Join(dir, r)
	}
	return files, nil
}

// Apply creates or updates every object of the YAML files with server-side
// apply, placing namespaced objects in namespace, as `kubectl apply -n`
// would. It returns the objects applied.
func (e *Env) Apply(ctx context.Context, namespace string, files ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if err := e.applyOne(ctx, namespace, o); err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", filepath.Base(f), o.GetKind(), o.GetName(), err)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// applyOne applies one object, namespaced when its kind is.
func (e *Env) applyOne(ctx context.Context, namespace string, o *unstructured.Unstructured) error {
	namespaced, err := e.Client.IsObjectNamespaced(o)
	if err != nil {
		return err
	}
	if namespaced {
		o.SetNamespace(namespace)
	}
	return e.Client.Patch(ctx, o, client.Apply, client.FieldOwner("parentrag-demo"), client.ForceOwnership)
}

// readObjects decodes every document of a YAML file.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var o unstructured.Unstructured
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(o.Object) > 0 {
			out = append(out, &o)
		}
	}
}
