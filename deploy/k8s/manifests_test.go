// Package k8s_test renders the kustomizations under deploy/k8s in-process (the
// same library `kubectl apply -k` uses) and checks what a cluster operator
// relies on: probes, requests and limits, the restricted security context,
// Services that reach every named port, and the MongoDB replica set.
package k8s_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const (
	namespace = "custody-suite"
	partOf    = "custody-suite"
	// serviceUID is distroless's "nonroot" user; mongoUID is the mongo image's
	// "mongodb" user.
	serviceUID = 65532
	mongoUID   = 999
)

// wantDeployments are the eight binaries of the suite, one Deployment each.
var wantDeployments = []string{"compliance", "custody", "dispatcher", "events", "gateway", "interchange", "servicedesk", "trading"}

// sharedDatabase names the Deployments that work in another service's
// database (MONGODB_DATABASE) instead of one named like themselves: the
// webhook dispatcher delivers from the events service's.
var sharedDatabase = map[string]string{"dispatcher": "events"}

// webhookKeys is how the events service and the dispatcher get the webhook
// keyring (keyEnv): from the webhook-keys Secret, never a literal value.
var webhookKeys = map[string]string{
	"WEBHOOK_KEYS":        "Secret webhook-keys, key WEBHOOK_KEYS",
	"WEBHOOK_KEY_CURRENT": "Secret webhook-keys, key WEBHOOK_KEY_CURRENT",
}

// trustList is INTERNAL_PUBLIC_KEYS of every service: the internal issuers
// besides the gateway (wantInternalIssuers), sorted, each a key of the
// internal-public-keys Secret mounted at /etc/suite/internal.
const trustList = "compliance=/etc/suite/internal/compliance.pem," +
	"custody=/etc/suite/internal/custody.pem," +
	"interchange=/etc/suite/internal/interchange.pem," +
	"servicedesk=/etc/suite/internal/servicedesk.pem," +
	"settlement-engine=/etc/suite/internal/settlement-engine.pem," +
	"trading=/etc/suite/internal/trading.pem"

// wantKeyEnv are the key settings of each Deployment, and no others (see
// keyEnv): the gateway signs as the principal; the services (the events
// service too) trust it and the internal issuers; the five relays sign their
// own calls (to peers and to the events log) under their own names; trading
// also signs addresses; the events service calls no one and signs nothing.
// The events service seals webhook secrets with the webhook keyring and the
// dispatcher opens them with it; the dispatcher, which serves no method, has
// only the gateway's key that every service binary requires.
var wantKeyEnv = map[string]map[string]string{
	"gateway": {
		"PRINCIPAL_PRIVATE_KEY_FILE": "/etc/suite/principal/private.pem",
	},
	"servicedesk": {
		"PRINCIPAL_PUBLIC_KEY_FILE": "/etc/suite/principal/public.pem",
		"INTERNAL_PUBLIC_KEYS":      trustList,
		"SERVICE_PRIVATE_KEY_FILE":  "/etc/suite/servicedesk/private.pem",
	},
	"trading": {
		"PRINCIPAL_PUBLIC_KEY_FILE": "/etc/suite/principal/public.pem",
		"INTERNAL_PUBLIC_KEYS":      trustList,
		"SERVICE_PRIVATE_KEY_FILE":  "/etc/suite/trading/private.pem",
		"OPERATOR_PRIVATE_KEY_FILE": "/etc/suite/operator/private.pem",
	},
	"interchange": {
		"PRINCIPAL_PUBLIC_KEY_FILE": "/etc/suite/principal/public.pem",
		"INTERNAL_PUBLIC_KEYS":      trustList,
		"SERVICE_PRIVATE_KEY_FILE":  "/etc/suite/interchange/private.pem",
	},
	"custody": {
		"PRINCIPAL_PUBLIC_KEY_FILE": "/etc/suite/principal/public.pem",
		"INTERNAL_PUBLIC_KEYS":      trustList,
		"SERVICE_PRIVATE_KEY_FILE":  "/etc/suite/custody/private.pem",
	},
	"compliance": {
		"PRINCIPAL_PUBLIC_KEY_FILE": "/etc/suite/principal/public.pem",
		"INTERNAL_PUBLIC_KEYS":      trustList,
		"SERVICE_PRIVATE_KEY_FILE":  "/etc/suite/compliance/private.pem",
	},
	"events": {
		"PRINCIPAL_PUBLIC_KEY_FILE": "/etc/suite/principal/public.pem",
		"INTERNAL_PUBLIC_KEYS":      trustList,
		"WEBHOOK_KEYS":              webhookKeys["WEBHOOK_KEYS"],
		"WEBHOOK_KEY_CURRENT":       webhookKeys["WEBHOOK_KEY_CURRENT"],
	},
	"dispatcher": {
		"PRINCIPAL_PUBLIC_KEY_FILE": "/etc/suite/principal/public.pem",
		"WEBHOOK_KEYS":              webhookKeys["WEBHOOK_KEYS"],
		"WEBHOOK_KEY_CURRENT":       webhookKeys["WEBHOOK_KEY_CURRENT"],
	},
}

// unexposedPorts are the named container ports that no Service may expose:
// the dispatcher's gRPC port serves only the kubelet's health probes (nothing
// calls it), so no peer address can name it.
var unexposedPorts = map[string][]string{"dispatcher": {"grpc"}}

// rendered holds the output of one kustomization, decoded strictly into the
// Kubernetes API types.
type rendered struct {
	namespaces   []corev1.Namespace
	configMaps   []corev1.ConfigMap
	secrets      []corev1.Secret
	services     []corev1.Service
	deployments  []appsv1.Deployment
	statefulSets []appsv1.StatefulSet
	jobs         []batchv1.Job
	disruption   []policyv1.PodDisruptionBudget
	netPolicies  []networkingv1.NetworkPolicy
	autoscalers  []autoscalingv2.HorizontalPodAutoscaler
}

func TestManifests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give         string
		wantReplicas int32
		// wantProduction is PRODUCTION as every Deployment sees it: base is
		// production-like (demo keys refused), the local overlay deploys the
		// example secrets and must accept them.
		wantProduction string
		// wantMinScale is the autoscalers' minimum; wantSpread says whether
		// MongoDB's members must be on different nodes (required) or only
		// preferably (a one-node laptop cluster).
		wantMinScale int32
		wantSpread   bool
		// wantDigests: every image is pinned by digest (the production example).
		wantDigests bool
	}{
		{give: "base", wantReplicas: 2, wantProduction: "true", wantMinScale: 2, wantSpread: true},
		{give: "overlays/local", wantReplicas: 1, wantProduction: "false", wantMinScale: 1},
		{give: "overlays/production-example", wantReplicas: 2, wantProduction: "true", wantMinScale: 2, wantSpread: true, wantDigests: true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			r := render(t, tt.give)
			t.Run("inventory", func(t *testing.T) { checkInventory(t, r) })
			t.Run("keypairs", func(t *testing.T) { checkKeypairs(t, r) })
			t.Run("secret readers", func(t *testing.T) { checkSecretReaders(t, r) })
			t.Run("webhook keyring", func(t *testing.T) { checkWebhookKeyring(t, r) })
			t.Run("trust", func(t *testing.T) { checkTrust(t, r) })
			t.Run("production", func(t *testing.T) { checkSetting(t, r, "PRODUCTION", tt.wantProduction) })
			t.Run("webhooks", func(t *testing.T) { checkWebhookSettings(t, r, tt.wantProduction == "true") })
			t.Run("addresses", func(t *testing.T) { checkAddresses(t, r) })
			t.Run("operations", func(t *testing.T) { checkOperations(t, r, tt.wantMinScale, tt.wantSpread) })
			t.Run("network", func(t *testing.T) { checkNetwork(t, r) })
			t.Run("images", func(t *testing.T) { checkImages(t, r, tt.wantDigests) })
			for _, d := range r.deployments {
				t.Run("Deployment/"+d.Name, func(t *testing.T) { checkDeployment(t, r, d, tt.wantReplicas) })
			}
			for _, s := range r.statefulSets {
				t.Run("StatefulSet/"+s.Name, func(t *testing.T) { checkStatefulSet(t, r, s) })
			}
			for _, j := range r.jobs {
				t.Run("Job/"+j.Name, func(t *testing.T) {
					checkPod(t, "Job "+j.Name, j.Spec.Template.Spec, mongoUID, false)
					checkReferences(t, r, "Job "+j.Name, j.Spec.Template.Spec)
				})
			}
		})
	}
}

// render runs kustomize on dir (relative to this folder) and decodes every
// object, rejecting fields the API types do not know (a misspelt
// "readinesProbe" fails here instead of being dropped by the API server).
func render(t *testing.T, dir string) rendered {
	t.Helper()
	kustomizer := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := kustomizer.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var r rendered
	for _, res := range resMap.Resources() {
		data, err := res.MarshalJSON()
		if err != nil {
			t.Fatalf("%s %s: encode: %v", res.GetKind(), res.GetName(), err)
		}
		if err := r.add(res.GetKind(), data); err != nil {
			t.Fatalf("%s %s: %v", res.GetKind(), res.GetName(), err)
		}
	}
	return r
}

func (r *rendered) add(kind string, data []byte) error {
	switch kind {
	case "Namespace":
		return decodeInto(data, &r.namespaces)
	case "ConfigMap":
		return decodeInto(data, &r.configMaps)
	case "Secret":
		return decodeInto(data, &r.secrets)
	case "Service":
		return decodeInto(data, &r.services)
	case "Deployment":
		return decodeInto(data, &r.deployments)
	case "StatefulSet":
		return decodeInto(data, &r.statefulSets)
	case "Job":
		return decodeInto(data, &r.jobs)
	case "PodDisruptionBudget":
		return decodeInto(data, &r.disruption)
	case "NetworkPolicy":
		return decodeInto(data, &r.netPolicies)
	case "HorizontalPodAutoscaler":
		return decodeInto(data, &r.autoscalers)
	}
	return fmt.Errorf("kind %s is not checked by this test: teach rendered.add about it", kind)
}

func decodeInto[T any](data []byte, list *[]T) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var obj T
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	*list = append(*list, obj)
	return nil
}

// checkInventory asserts the set of workloads and that everything lands in
// the suite's namespace, which enforces the restricted Pod Security profile.
func checkInventory(t *testing.T, r rendered) {
	var names []string
	for _, d := range r.deployments {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff(wantDeployments, names); diff != "" {
		t.Errorf("Deployments mismatch (-want +got):\n%s", diff)
	}
	if len(r.namespaces) != 1 || r.namespaces[0].Name != namespace {
		t.Fatalf("want exactly the Namespace %s, got %d namespaces", namespace, len(r.namespaces))
	}
	if got := r.namespaces[0].Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("Namespace %s: pod-security enforce = %q, want restricted", namespace, got)
	}
	for _, obj := range r.namespacedObjects() {
		if obj.namespace != namespace {
			t.Errorf("%s %s: namespace %q, want %q", obj.kind, obj.name, obj.namespace, namespace)
		}
	}
}

type objectRef struct {
	kind, name, namespace string
}

func (r rendered) namespacedObjects() []objectRef {
	var refs []objectRef
	for _, o := range r.configMaps {
		refs = append(refs, objectRef{"ConfigMap", o.Name, o.Namespace})
	}
	for _, o := range r.secrets {
		refs = append(refs, objectRef{"Secret", o.Name, o.Namespace})
	}
	for _, o := range r.services {
		refs = append(refs, objectRef{"Service", o.Name, o.Namespace})
	}
	for _, o := range r.deployments {
		refs = append(refs, objectRef{"Deployment", o.Name, o.Namespace})
	}
	for _, o := range r.statefulSets {
		refs = append(refs, objectRef{"StatefulSet", o.Name, o.Namespace})
	}
	for _, o := range r.jobs {
		refs = append(refs, objectRef{"Job", o.Name, o.Namespace})
	}
	for _, o := range r.disruption {
		refs = append(refs, objectRef{"PodDisruptionBudget", o.Name, o.Namespace})
	}
	for _, o := range r.netPolicies {
		refs = append(refs, objectRef{"NetworkPolicy", o.Name, o.Namespace})
	}
	for _, o := range r.autoscalers {
		refs = append(refs, objectRef{"HorizontalPodAutoscaler", o.Name, o.Namespace})
	}
	return refs
}

// pod is the pod template of a workload, owner naming it ("Deployment gateway").
type pod struct {
	owner string
	spec  corev1.PodSpec
}

func (r rendered) pods() []pod {
	var pods []pod
	for _, o := range r.deployments {
		pods = append(pods, pod{"Deployment " + o.Name, o.Spec.Template.Spec})
	}
	for _, o := range r.statefulSets {
		pods = append(pods, pod{"StatefulSet " + o.Name, o.Spec.Template.Spec})
	}
	for _, o := range r.jobs {
		pods = append(pods, pod{"Job " + o.Name, o.Spec.Template.Spec})
	}
	return pods
}

func checkDeployment(t *testing.T, r rendered, d appsv1.Deployment, wantReplicas int32) {
	owner := "Deployment " + d.Name
	if d.Spec.Replicas == nil || *d.Spec.Replicas != wantReplicas {
		t.Errorf("%s: replicas = %v, want %d", owner, deref(d.Spec.Replicas), wantReplicas)
	}
	checkLabels(t, owner, d.Name, d.Labels, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	spec := d.Spec.Template.Spec
	checkPod(t, owner, spec, serviceUID, true)
	checkReferences(t, r, owner, spec)
	checkExposed(t, owner, selecting(r.services, d.Spec.Template.Labels), spec.Containers, unexposedPorts[d.Name]...)
	app := spec.Containers[0]
	if !strings.HasPrefix(app.Image, "custody-suite/"+d.Name+":") && !strings.Contains(app.Image, "/custody-suite/"+d.Name+"@sha256:") {
		t.Errorf("%s: image %q, want custody-suite/%s", owner, app.Image, d.Name)
	}
	wantDB := d.Name
	if db, ok := sharedDatabase[d.Name]; ok {
		wantDB = db
	}
	if got := envValue(app, "MONGODB_DATABASE"); got != wantDB {
		t.Errorf("%s: MONGODB_DATABASE = %q, want %q (each service owns its database; see sharedDatabase)", owner, got, wantDB)
	}
	if diff := cmp.Diff(wantKeyEnv[d.Name], keyEnv(app)); diff != "" {
		t.Errorf("%s: key settings mismatch (-want +got):\n%s", owner, diff)
	}
	if d.Name == "gateway" {
		// The gateway refuses to start when an entry is not a CIDR.
		proxies, _, err := effectiveEnv(r, app, "TRUSTED_PROXIES")
		if err != nil {
			t.Errorf("%s: TRUSTED_PROXIES: %v", owner, err)
		}
		for entry := range strings.SplitSeq(proxies, ",") {
			if entry = strings.TrimSpace(entry); entry == "" {
				continue
			}
			if _, err := netip.ParsePrefix(entry); err != nil {
				t.Errorf("%s: TRUSTED_PROXIES entry %q: want a CIDR: %v", owner, entry, err)
			}
		}
	}
}

// keyEnv returns the container's key settings: the variables named
// *_KEY_FILE, *_KEYS or *_KEY_CURRENT, each with its literal value or, when
// it comes from a Secret, "Secret <generator name>, key <key>" (any other
// reference is "unexpected reference").
func keyEnv(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		if !strings.HasSuffix(e.Name, "_KEY_FILE") && !strings.HasSuffix(e.Name, "_KEYS") && !strings.HasSuffix(e.Name, "_KEY_CURRENT") {
			continue
		}
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			env[e.Name] = "Secret " + generatorName(ref.Name) + ", key " + ref.Key
		default:
			env[e.Name] = "unexpected reference"
		}
	}
	return env
}

// generatorName strips the content-hash suffix kustomize gives a generated
// Secret or ConfigMap ("webhook-keys-7t2k9m5bdg" => "webhook-keys").
func generatorName(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || len(name)-i-1 != 10 {
		return name
	}
	if strings.Trim(name[i+1:], "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return name
	}
	return name[:i]
}

// checkSetting asserts that every Deployment's container sees the variable
// name with the value want, whether it comes from its env or its envFrom.
func checkSetting(t *testing.T, r rendered, name, want string) {
	for _, d := range r.deployments {
		got, from, err := effectiveEnv(r, d.Spec.Template.Spec.Containers[0], name)
		switch {
		case err != nil:
			t.Errorf("Deployment %s: %s: %v", d.Name, name, err)
		case from == "":
			t.Errorf("Deployment %s: %s is not set, want %q", d.Name, name, want)
		case got != want:
			t.Errorf("Deployment %s: %s = %q (from %s), want %q", d.Name, name, got, from, want)
		}
	}
}

// wantDispatcherEnv are the dispatcher's delivery settings (its defaults, set
// to be visible). WEBHOOK_SCHEDULE stays unset: the default schedule, 13
// attempts over about 32 h.
var wantDispatcherEnv = map[string]string{
	"WEBHOOK_TIMEOUT":           "15s",
	"SUSPEND_AFTER":             "120h",
	"DISPATCH_INTERVAL":         "100ms",
	"DISPATCH_WORKERS":          "8",
	"DISPATCH_PER_SUBSCRIPTION": "2",
	"DELIVERY_LEASE":            "30s",
	"WEBHOOK_RETENTION":         "720h",
	"WEBHOOK_SCHEDULE":          "",
}

// webhookDevSwitches let deliveries use http and reach private addresses:
// development only, refused at start-up with PRODUCTION=true.
var webhookDevSwitches = []string{"WEBHOOK_ALLOW_HTTP", "WEBHOOK_ALLOW_PRIVATE"}

// checkWebhookSettings asserts the dispatcher's delivery settings as it sees
// them (durations it accepts: positive, DELIVERY_LEASE longer than
// WEBHOOK_TIMEOUT, or it refuses to start), that no ConfigMap carries the
// webhook keyring (a Secret does), and, in a production render, that no
// Deployment sees the development switches.
func checkWebhookSettings(t *testing.T, r rendered, production bool) {
	i := slices.IndexFunc(r.deployments, func(d appsv1.Deployment) bool { return d.Name == "dispatcher" })
	if i < 0 {
		t.Fatal("no Deployment dispatcher")
	}
	c := r.deployments[i].Spec.Template.Spec.Containers[0]
	got := map[string]string{}
	durations := map[string]time.Duration{}
	for name := range wantDispatcherEnv {
		value, _, err := effectiveEnv(r, c, name)
		if err != nil {
			t.Errorf("Deployment dispatcher: %s: %v", name, err)
		}
		got[name] = value
		if value == "" {
			continue
		}
		switch name {
		case "WEBHOOK_SCHEDULE":
			continue
		case "DISPATCH_WORKERS", "DISPATCH_PER_SUBSCRIPTION":
			if n, err := strconv.Atoi(value); err != nil || n <= 0 {
				t.Errorf("Deployment dispatcher: %s=%q: want a positive count", name, value)
			}
			continue
		}
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			t.Errorf("Deployment dispatcher: %s=%q: want a positive duration", name, value)
		}
		durations[name] = d
	}
	if diff := cmp.Diff(wantDispatcherEnv, got); diff != "" {
		t.Errorf("Deployment dispatcher: delivery settings mismatch (-want +got):\n%s", diff)
	}
	if durations["DELIVERY_LEASE"] <= durations["WEBHOOK_TIMEOUT"] {
		t.Errorf("Deployment dispatcher: DELIVERY_LEASE %s must outlive WEBHOOK_TIMEOUT %s (the dispatcher refuses to start)",
			durations["DELIVERY_LEASE"], durations["WEBHOOK_TIMEOUT"])
	}
	for _, cm := range r.configMaps {
		for key := range webhookKeys {
			if _, ok := cm.Data[key]; ok {
				t.Errorf("ConfigMap %s: holds %s, which belongs in the webhook-keys Secret", cm.Name, key)
			}
		}
	}
	if !production {
		return
	}
	for _, d := range r.deployments {
		for _, name := range webhookDevSwitches {
			value, from, err := effectiveEnv(r, d.Spec.Template.Spec.Containers[0], name)
			if err != nil || from != "" {
				t.Errorf("Deployment %s: %s=%q (from %s): never set it where PRODUCTION=true (refused at start-up)", d.Name, name, value, from)
			}
		}
	}
}

// wantEventsAddr is EVENTS_ADDR as the relays and the gateway must see it: the
// events Service's gRPC port. Unset, a relay keeps its events in its outboxes
// (with only a warning) and the gateway dials its default, 127.0.0.1:9006.
const wantEventsAddr = "events:9000"

// checkAddresses asserts that the five relays and the gateway see EVENTS_ADDR,
// and that every peer address a Deployment sees (a *_ADDR variable of its env
// or envFrom naming a host, not a listen address like ":9000") is
// <Service>:<port> of a Service whose port of that number targets a port
// named grpc.
func checkAddresses(t *testing.T, r rendered) {
	for _, d := range r.deployments {
		c := d.Spec.Template.Spec.Containers[0]
		if d.Name == "gateway" || slices.Contains(relays, d.Name) {
			got, from, err := effectiveEnv(r, c, "EVENTS_ADDR")
			switch {
			case err != nil:
				t.Errorf("Deployment %s: EVENTS_ADDR: %v", d.Name, err)
			case got != wantEventsAddr:
				t.Errorf("Deployment %s: EVENTS_ADDR = %q (from %q), want %q", d.Name, got, from, wantEventsAddr)
			}
		}
		names := map[string]bool{}
		for _, e := range c.Env {
			names[e.Name] = true
		}
		for _, src := range c.EnvFrom {
			if src.ConfigMapRef == nil {
				continue
			}
			if cm := findConfigMap(r, src.ConfigMapRef.Name); cm != nil {
				for key := range cm.Data {
					names[src.Prefix+key] = true
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if !strings.HasSuffix(name, "_ADDR") {
				continue
			}
			addr, _, err := effectiveEnv(r, c, name)
			if err != nil {
				t.Errorf("Deployment %s: %s: %v", d.Name, name, err)
				continue
			}
			if addr == "" || strings.HasPrefix(addr, ":") {
				continue // unset, or where it listens
			}
			if err := checkServiceAddr(r, addr); err != nil {
				t.Errorf("Deployment %s: %s=%q: %v", d.Name, name, addr, err)
			}
		}
	}
}

// checkServiceAddr checks that addr is <Service>:<port> of a Service port
// targeting a container port named grpc.
func checkServiceAddr(r rendered, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(r.services, func(s corev1.Service) bool { return s.Name == host })
	if i < 0 {
		return fmt.Errorf("no Service %q", host)
	}
	for _, sp := range r.services[i].Spec.Ports {
		if strconv.Itoa(int(sp.Port)) == port {
			if sp.TargetPort.String() != "grpc" {
				return fmt.Errorf("Service %s port %s targets %q, want grpc", host, port, sp.TargetPort.String())
			}
			return nil
		}
	}
	return fmt.Errorf("Service %s has no port %s", host, port)
}

// effectiveEnv returns the value of the variable name in container c as the
// kubelet sets it, and where it comes from ("" when unset): an env entry wins
// over envFrom, and among envFrom sources the last one that has the key.
// Values from Secrets, or from references this test does not follow, are an
// error: the settings it checks are plain configuration.
func effectiveEnv(r rendered, c corev1.Container, name string) (value, from string, err error) {
	for _, e := range slices.Backward(c.Env) {
		if e.Name != name {
			continue
		}
		if e.ValueFrom != nil {
			return "", "env", errors.New("set from a reference, want a literal value")
		}
		return e.Value, "env", nil
	}
	for _, src := range slices.Backward(c.EnvFrom) {
		key, ok := strings.CutPrefix(name, src.Prefix)
		if !ok {
			continue
		}
		switch {
		case src.ConfigMapRef != nil:
			cm := findConfigMap(r, src.ConfigMapRef.Name)
			if cm == nil {
				return "", "", fmt.Errorf("envFrom ConfigMap %q not found", src.ConfigMapRef.Name)
			}
			if v, ok := cm.Data[key]; ok {
				return v, "ConfigMap " + cm.Name, nil
			}
		case src.SecretRef != nil:
			s := findSecret(r, src.SecretRef.Name)
			if s == nil {
				return "", "", fmt.Errorf("envFrom Secret %q not found", src.SecretRef.Name)
			}
			if _, ok := s.Data[key]; ok {
				return "", "Secret " + s.Name, errors.New("set from a Secret, want plain configuration")
			}
		}
	}
	return "", "", nil
}

func checkStatefulSet(t *testing.T, r rendered, s appsv1.StatefulSet) {
	owner := "StatefulSet " + s.Name
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 3 {
		t.Errorf("%s: replicas = %v, want 3 (replica set members)", owner, deref(s.Spec.Replicas))
	}
	checkLabels(t, owner, s.Name, s.Labels, s.Spec.Selector.MatchLabels, s.Spec.Template.Labels)
	spec := s.Spec.Template.Spec
	var claims []string
	for _, c := range s.Spec.VolumeClaimTemplates {
		claims = append(claims, c.Name)
	}
	if len(claims) == 0 {
		t.Errorf("%s: no volumeClaimTemplates: data would not survive a restart", owner)
	}
	checkPod(t, owner, spec, mongoUID, true, claims...)
	checkReferences(t, r, owner, spec)
	i := slices.IndexFunc(r.services, func(svc corev1.Service) bool { return svc.Name == s.Spec.ServiceName })
	if i < 0 {
		t.Fatalf("%s: serviceName %q: no such Service", owner, s.Spec.ServiceName)
	}
	headless := r.services[i]
	if headless.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("%s: Service %s has clusterIP %q, want None (headless)", owner, headless.Name, headless.Spec.ClusterIP)
	}
	if !subset(headless.Spec.Selector, s.Spec.Template.Labels) {
		t.Errorf("%s: Service %s selector %v does not select pod labels %v", owner, headless.Name, headless.Spec.Selector, s.Spec.Template.Labels)
	}
	checkExposed(t, owner, []corev1.Service{headless}, spec.Containers)
}

// checkLabels asserts the recommended labels on the object and its pods, and
// that the selector selects the pods.
func checkLabels(t *testing.T, owner, name string, labels, selector, podLabels map[string]string) {
	want := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": partOf}
	for what, got := range map[string]map[string]string{"labels": labels, "pod template labels": podLabels} {
		if !subset(want, got) {
			t.Errorf("%s: %s %v, want them to include %v", owner, what, got, want)
		}
	}
	if len(selector) == 0 || !subset(selector, podLabels) {
		t.Errorf("%s: selector %v does not select pod template labels %v", owner, selector, podLabels)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "unset"
	}
	return *p
}
