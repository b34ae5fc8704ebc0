package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// What a caller of a Retriever in Kubernetes mode needs, in RBAC terms.
const (
	// RetrieverGroup, RetrieverResource and QuerySubresource with the verb
	// QueryVerb are what a Role grants to let its subjects query a
	// Retriever (resourceNames: the Retriever).
	RetrieverGroup    = "parentrag.io"
	RetrieverResource = "retrievers"
	QuerySubresource  = "query"
	QueryVerb         = "get"
)

// Defaults of a KubeReviewer's cache.
const (
	// DefaultReviewTTL is how long a decision on a token is reused.
	DefaultReviewTTL = 10 * time.Second
	// DefaultReviewCacheSize bounds the decisions kept.
	DefaultReviewCacheSize = 4096
)

// reviewTimeout bounds the API calls one decision makes.
const reviewTimeout = 5 * time.Second

// KubeReviewer accepts Kubernetes bearer tokens: the API server
// authenticates a token (TokenReview), then authorizes its user
// (SubjectAccessReview): for a query, get on the subresource
// retrievers/query of one Retriever in group parentrag.io; for /metrics,
// get on the non-resource URL /metrics, as controller-runtime's metrics
// filter asks. A decision, allowed or refused, is kept for a short TTL
// under the token's SHA-256 digest (never the token), in a cache of
// bounded size, so that a client's queries cost no API call within it.
// API errors are not kept.
type KubeReviewer struct {
	client    kubernetes.Interface
	namespace string
	name      string
	ttl       time.Duration
	decisions *cache.LRUExpireCache
	log       *slog.Logger
}

// KubeReviewerOptions configure a KubeReviewer; zero fields take their
// defaults.
type KubeReviewerOptions struct {
	// TTL is how long a decision is reused (default 10s).
	TTL time.Duration
	// CacheSize bounds the decisions kept (default 4096).
	CacheSize int
	// Log receives failed API calls (nil: discarded).
	Log *slog.Logger
}

// NewKubeReviewer returns a KubeReviewer that asks the API server cfg
// reaches about the Retriever namespace/name. The identity of cfg needs
// create on tokenreviews and subjectaccessreviews (the ClusterRole
// system:auth-delegator).
func NewKubeReviewer(cfg *rest.Config, namespace, name string, opts KubeReviewerOptions) (*KubeReviewer, error) {
	if namespace == "" || name == "" {
		return nil, fmt.Errorf("the Retriever to authorize against needs a namespace and a name, got %q/%q", namespace, name)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a kubernetes client: %w", err)
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultReviewTTL
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultReviewCacheSize
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &KubeReviewer{client: c, namespace: namespace, name: name, ttl: opts.TTL,
		decisions: cache.NewLRUExpireCache(opts.CacheSize), log: opts.Log}, nil
}

// Mode is "kubernetes".
func (k *KubeReviewer) Mode() string { return "kubernetes" }

// decisionKey identifies a decision: a token's digest and the access.
type decisionKey struct {
	digest [sha256.Size]byte
	access Access
}

// decision is a kept answer: nil allows.
type decision struct{ err error }

// Authorize answers from the cache, or asks the API server and keeps the
// answer for the TTL.
func (k *KubeReviewer) Authorize(ctx context.Context, token string, access Access) error {
	key := decisionKey{digest: sha256.Sum256([]byte(token)), access: access}
	if d, ok := k.decisions.Get(key); ok {
		return d.(decision).err
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	err := k.review(ctx, token, access)
	var refused *AuthError
	if err == nil || errors.As(err, &refused) {
		k.decisions.Add(key, decision{err: err}, k.ttl)
	}
	return err
}

// review authenticates the token and authorizes its user for access.
func (k *KubeReviewer) review(ctx context.Context, token string, access Access) error {
	user, err := k.authenticate(ctx, token)
	if err != nil {
		return err
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extraOf(user.Extra),
	}}
	what := fmt.Sprintf("query Retriever %s/%s: it needs %s on %s/%s (group %s) for that name", k.namespace, k.name,
		QueryVerb, RetrieverResource, QuerySubresource, RetrieverGroup)
	if access == AccessMetrics {
		sar.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}
		what = "read /metrics: it needs get on the non-resource URL /metrics"
	} else {
		sar.Spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace: k.namespace, Name: k.name, Verb: QueryVerb,
			Group: RetrieverGroup, Resource: RetrieverResource, Subresource: QuerySubresource,
		}
	}
	res, err := k.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		k.log.Error("authorizing a caller failed", "user", user.Username, "err", err)
		return fmt.Errorf("creating a SubjectAccessReview: %w", err)
	}
	if !res.Status.Allowed {
		return forbidden(fmt.Sprintf("%s may not %s", user.Username, what))
	}
	return nil
}

// authenticate returns the user the API server finds the token to be.
func (k *KubeReviewer) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	res, err := k.client.AuthenticationV1().TokenReviews().Create(ctx, tr, metav1.CreateOptions{})
	if err != nil {
		k.log.Error("authenticating a caller failed", "err", err)
		return nil, fmt.Errorf("creating a TokenReview: %w", err)
	}
	if !res.Status.Authenticated {
		return nil, unauthenticated("the bearer token is not a valid Kubernetes token (expired, revoked, or of another cluster)")
	}
	return &res.Status.User, nil
}

// extraOf converts a TokenReview's extra user information into a
// SubjectAccessReview's.
func extraOf(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}
