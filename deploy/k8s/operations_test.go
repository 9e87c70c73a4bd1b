package k8s_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// internalSystem labels the pods of the internal systems outside the suite (the settlement
// engine, operator tools), which call the services with their own signed principal.
const internalSystem = "internal-system"

// wantCallers says, independently of the manifests, who calls each service's gRPC port: the
// gateway, the peers whose code dials it (the service desk runs every service's plugin,
// interchange drives trading's journal and asks custody and compliance, custody asks the service
// desk and compliance, and the five services' outbox relays append to the events log), and the
// internal systems (the events log's stream admits every internal system). The webhook
// dispatcher serves no API (its gRPC port answers only the kubelet's health probes): nobody
// calls it, and it calls no service (it works in the events database and posts to customers'
// endpoints), so it is in no list.
var wantCallers = map[string][]string{
	"servicedesk": {"custody", "gateway", "interchange", internalSystem},
	"trading":     {"gateway", "interchange", "servicedesk", internalSystem},
	"interchange": {"gateway", "servicedesk", internalSystem},
	"custody":     {"gateway", "interchange", "servicedesk", internalSystem},
	"compliance":  {"custody", "gateway", "interchange", "servicedesk", internalSystem},
	"events":      {"compliance", "custody", "gateway", "interchange", "servicedesk", "trading", internalSystem},
	"dispatcher":  {},
}

// checkOperations: every Deployment has a PodDisruptionBudget that lets a drain take one pod
// at a time, and an autoscaler on CPU whose minimum is wantMin; MongoDB's members are spread
// over nodes (required, or only preferred on a one-node cluster).
func checkOperations(t *testing.T, r rendered, wantMin int32, wantSpread bool) {
	for _, d := range r.deployments {
		pods := labels.Set(d.Spec.Template.Labels)
		var budgets int
		for _, pdb := range r.disruption {
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || !sel.Matches(pods) {
				continue
			}
			budgets++
			if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
				t.Errorf("PodDisruptionBudget %s: want maxUnavailable 1 (never blocking a drain of a one-replica overlay)", pdb.Name)
			}
		}
		if budgets != 1 {
			t.Errorf("Deployment %s: %d PodDisruptionBudgets select its pods, want 1", d.Name, budgets)
		}
		var scalers int
		for _, h := range r.autoscalers {
			if h.Spec.ScaleTargetRef.Kind != "Deployment" || h.Spec.ScaleTargetRef.Name != d.Name {
				continue
			}
			scalers++
			if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != wantMin || h.Spec.MaxReplicas < *h.Spec.MinReplicas+1 {
				t.Errorf("HorizontalPodAutoscaler %s: replicas %v..%d, want from %d with room to grow", h.Name, deref(h.Spec.MinReplicas), h.Spec.MaxReplicas, wantMin)
			}
			if len(h.Spec.Metrics) == 0 || h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
				t.Errorf("HorizontalPodAutoscaler %s: want a CPU metric (every container requests CPU)", h.Name)
			}
		}
		if scalers != 1 {
			t.Errorf("Deployment %s: %d autoscalers, want 1", d.Name, scalers)
		}
	}
	for _, s := range r.statefulSets {
		a := s.Spec.Template.Spec.Affinity
		if a == nil || a.PodAntiAffinity == nil {
			t.Errorf("StatefulSet %s: no pod anti-affinity", s.Name)
			continue
		}
		var terms []corev1.PodAffinityTerm
		if wantSpread {
			terms = a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		} else {
			for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				terms = append(terms, w.PodAffinityTerm)
			}
		}
		spread := slices.ContainsFunc(terms, func(term corev1.PodAffinityTerm) bool {
			sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
			return err == nil && term.TopologyKey == "kubernetes.io/hostname" && sel.Matches(labels.Set(s.Spec.Template.Labels))
		})
		if !spread {
			t.Errorf("StatefulSet %s: members not spread over nodes (required %t)", s.Name, wantSpread)
		}
	}
}

// checkNetwork: each Deployment's pods are selected by a NetworkPolicy; the gateway's HTTP
// port is open, each service's gRPC port admits exactly wantCallers (no rule at all when
// nobody calls it), every metrics port only Prometheus, and MongoDB only the suite's services,
// the gateway, its members and its init Job, which lets in every Deployment. The policies
// restrict ingress only (README.md): the dispatcher's deliveries leave for the internet.
func checkNetwork(t *testing.T, r rendered) {
	for _, p := range r.netPolicies {
		if slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || len(p.Spec.Egress) > 0 {
			t.Errorf("NetworkPolicy %s: restricts egress; the README says nothing does. If you restrict it, "+
				"let every pod reach DNS and MongoDB, and the dispatcher TCP 443 to 0.0.0.0/0 except "+
				"private ranges, then update this test and the README", p.Name)
		}
	}
	for _, d := range r.deployments {
		pods := labels.Set(d.Spec.Template.Labels)
		var policy *networkingv1.NetworkPolicy
		for i, p := range r.netPolicies {
			if sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector); err == nil && sel.Matches(pods) {
				policy = &r.netPolicies[i]
			}
		}
		if policy == nil {
			t.Errorf("Deployment %s: no NetworkPolicy selects its pods", d.Name)
			continue
		}
		if !slices.Contains(policy.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			t.Errorf("NetworkPolicy %s: does not restrict ingress", policy.Name)
		}
		byPort := map[string][]string{}
		for _, rule := range policy.Spec.Ingress {
			for _, port := range rule.Ports {
				name := port.Port.String()
				if len(rule.From) == 0 {
					byPort[name] = append(byPort[name], "anyone")
				}
				for _, peer := range rule.From {
					byPort[name] = append(byPort[name], peerName(peer))
				}
			}
		}
		for _, peers := range byPort {
			slices.Sort(peers)
		}
		want := map[string][]string{"metrics": {"prometheus"}}
		if d.Name == "gateway" {
			want["http"] = []string{"anyone"}
		} else if callers, ok := wantCallers[d.Name]; !ok {
			t.Errorf("Deployment %s: not in wantCallers: say who calls it", d.Name)
		} else if len(callers) > 0 {
			want["grpc"] = slices.Sorted(slices.Values(callers))
		}
		if diff := cmp.Diff(want, byPort); diff != "" {
			t.Errorf("NetworkPolicy %s: who reaches which port (-want +got):\n%s", policy.Name, diff)
		}
	}
	for _, s := range r.statefulSets {
		var from []string
		for _, p := range r.netPolicies {
			if sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector); err != nil || !sel.Matches(labels.Set(s.Spec.Template.Labels)) {
				continue
			}
			for _, rule := range p.Spec.Ingress {
				if len(rule.From) == 0 {
					from = append(from, "anyone")
				}
				for _, peer := range rule.From {
					from = append(from, peerName(peer))
				}
			}
		}
		slices.Sort(from)
		want := []string{"component in (gateway,service)", "mongodb", "mongodb-init-replica-set"}
		if diff := cmp.Diff(want, from); diff != "" {
			t.Errorf("StatefulSet %s: who reaches it (-want +got):\n%s", s.Name, diff)
		}
		// Every Deployment works in MongoDB (the dispatcher in the events database).
		for _, d := range r.deployments {
			if !admits(r.netPolicies, s.Spec.Template.Labels, d.Spec.Template.Labels) {
				t.Errorf("StatefulSet %s: no NetworkPolicy lets Deployment %s in", s.Name, d.Name)
			}
		}
	}
}

// admits reports whether a policy selecting the pods labelled target has an ingress rule
// whose peers include the pods labelled from (of the same namespace).
func admits(policies []networkingv1.NetworkPolicy, target, from map[string]string) bool {
	for _, p := range policies {
		if sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector); err != nil || !sel.Matches(labels.Set(target)) {
			continue
		}
		for _, rule := range p.Spec.Ingress {
			if len(rule.From) == 0 {
				return true
			}
			for _, peer := range rule.From {
				if peer.PodSelector == nil || peer.IPBlock != nil || peer.NamespaceSelector != nil {
					continue
				}
				if sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector); err == nil && sel.Matches(labels.Set(from)) {
					return true
				}
			}
		}
	}
	return false
}

// peerName names a NetworkPolicy peer for the comparisons above.
func peerName(p networkingv1.NetworkPolicyPeer) string {
	switch {
	case p.IPBlock != nil:
		return "ipBlock " + p.IPBlock.CIDR
	case p.PodSelector == nil:
		return "namespaces"
	case p.PodSelector.MatchLabels["app.kubernetes.io/name"] != "" && len(p.PodSelector.MatchLabels) == 1 && len(p.PodSelector.MatchExpressions) == 0:
		return p.PodSelector.MatchLabels["app.kubernetes.io/name"]
	case p.PodSelector.MatchLabels["app.kubernetes.io/component"] == internalSystem && len(p.PodSelector.MatchLabels) == 1 && p.NamespaceSelector == nil:
		return internalSystem
	case len(p.PodSelector.MatchExpressions) == 1 && len(p.PodSelector.MatchLabels) == 0 && p.NamespaceSelector == nil:
		e := p.PodSelector.MatchExpressions[0]
		values := slices.Sorted(slices.Values(e.Values))
		if e.Key == "app.kubernetes.io/component" && e.Operator == metav1.LabelSelectorOpIn {
			out := "component in ("
			for i, v := range values {
				if i > 0 {
					out += ","
				}
				out += v
			}
			return out + ")"
		}
	}
	return "unrecognised peer"
}

var digestPinned = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)

// checkImages: with wantDigests every container image of every pod is pinned by digest.
func checkImages(t *testing.T, r rendered, wantDigests bool) {
	if !wantDigests {
		return
	}
	for _, p := range r.pods() {
		for _, c := range append(slices.Clone(p.spec.InitContainers), p.spec.Containers...) {
			if !digestPinned.MatchString(c.Image) {
				t.Errorf("%s: container %s image %q is not pinned by digest", p.owner, c.Name, c.Image)
			}
		}
	}
}
