package k8s_test

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkPod asserts the pod- and container-level security context, requests
// and limits, probes (when wantProbes) and that every volume mount names a
// pod volume or one of claims.
func checkPod(t *testing.T, owner string, spec corev1.PodSpec, uid int64, wantProbes bool, claims ...string) {
	t.Helper()
	if got := deref(spec.TerminationGracePeriodSeconds); got != int64(30) {
		t.Errorf("%s: terminationGracePeriodSeconds = %v, want 30", owner, got)
	}
	checkPodSecurity(t, owner, spec.SecurityContext, uid)
	volumes := slices.Clone(claims)
	for _, v := range spec.Volumes {
		volumes = append(volumes, v.Name)
	}
	if len(spec.Containers) == 0 {
		t.Fatalf("%s: no containers", owner)
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		where := owner + ", container " + c.Name
		if diff := cmp.Diff(restrictedContainer(uid), c.SecurityContext); diff != "" {
			t.Errorf("%s: securityContext mismatch (-want +got):\n%s", where, diff)
		}
		checkResources(t, where, c.Resources)
		for _, m := range c.VolumeMounts {
			if !slices.Contains(volumes, m.Name) {
				t.Errorf("%s: volumeMount %q names no volume", where, m.Name)
			}
		}
	}
	if wantProbes {
		for _, c := range spec.Containers {
			checkProbes(t, owner+", container "+c.Name, c)
		}
	}
}

func checkPodSecurity(t *testing.T, owner string, sc *corev1.PodSecurityContext, uid int64) {
	t.Helper()
	if sc == nil {
		t.Errorf("%s: no pod securityContext", owner)
		return
	}
	want := corev1.PodSecurityContext{
		RunAsNonRoot:   ptr(true),
		RunAsUser:      ptr(uid),
		RunAsGroup:     ptr(uid),
		FSGroup:        ptr(uid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	got := corev1.PodSecurityContext{
		RunAsNonRoot:   sc.RunAsNonRoot,
		RunAsUser:      sc.RunAsUser,
		RunAsGroup:     sc.RunAsGroup,
		FSGroup:        sc.FSGroup,
		SeccompProfile: sc.SeccompProfile,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: pod securityContext mismatch (-want +got):\n%s", owner, diff)
	}
}

// restrictedContainer is the container securityContext the suite requires:
// the Pod Security "restricted" profile plus a fixed non-root user and a
// read-only root filesystem.
func restrictedContainer(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr(true),
		RunAsUser:                ptr(uid),
		RunAsGroup:               ptr(uid),
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func checkResources(t *testing.T, where string, res corev1.ResourceRequirements) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		request, hasRequest := res.Requests[name]
		limit, hasLimit := res.Limits[name]
		switch {
		case !hasRequest || request.IsZero():
			t.Errorf("%s: no %s request", where, name)
		case !hasLimit || limit.IsZero():
			t.Errorf("%s: no %s limit", where, name)
		case request.Cmp(limit) > 0:
			t.Errorf("%s: %s request %s exceeds its limit %s", where, name, request.String(), limit.String())
		}
	}
}

// checkProbes asserts readiness and liveness probes, each aimed at a port the
// container declares (exec probes aside).
func checkProbes(t *testing.T, where string, c corev1.Container) {
	t.Helper()
	for kind, p := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
		if p == nil {
			t.Errorf("%s: no %s", where, kind)
			continue
		}
		port, ok := probePort(p)
		if ok && !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return targets(port, cp) }) {
			t.Errorf("%s: %s targets port %s, which the container does not declare", where, kind, port.String())
		}
	}
}

func probePort(p *corev1.Probe) (intstr.IntOrString, bool) {
	switch {
	case p.GRPC != nil:
		return intstr.FromInt32(p.GRPC.Port), true
	case p.HTTPGet != nil:
		return p.HTTPGet.Port, true
	case p.TCPSocket != nil:
		return p.TCPSocket.Port, true
	}
	return intstr.IntOrString{}, false
}

// targets reports whether port (a name or a number) designates cp.
func targets(port intstr.IntOrString, cp corev1.ContainerPort) bool {
	if port.Type == intstr.String {
		return port.StrVal == cp.Name
	}
	return port.IntVal == cp.ContainerPort
}

// checkExposed asserts that, for every named container port, one of services
// has a port of the same name whose targetPort reaches it, except for the
// ports named in unexposed, which no Service port may reach.
func checkExposed(t *testing.T, owner string, services []corev1.Service, containers []corev1.Container, unexposed ...string) {
	t.Helper()
	if len(services) == 0 {
		t.Errorf("%s: no Service selects its pods", owner)
		return
	}
	for _, c := range containers {
		for _, cp := range c.Ports {
			if cp.Name == "" {
				t.Errorf("%s, container %s: port %d has no name", owner, c.Name, cp.ContainerPort)
				continue
			}
			if slices.Contains(unexposed, cp.Name) {
				if reaches(services, cp) {
					t.Errorf("%s, container %s: a Service port reaches container port %s (%d), which must stay in no Service", owner, c.Name, cp.Name, cp.ContainerPort)
				}
				continue
			}
			if !exposes(services, cp) {
				t.Errorf("%s, container %s: no Service port named %q targets container port %d", owner, c.Name, cp.Name, cp.ContainerPort)
			}
		}
	}
}

func exposes(services []corev1.Service, cp corev1.ContainerPort) bool {
	for _, svc := range services {
		for _, sp := range svc.Spec.Ports {
			if sp.Name == cp.Name && targets(sp.TargetPort, cp) {
				return true
			}
		}
	}
	return false
}

// reaches reports whether any port of services targets cp, whatever its name
// (a port without targetPort targets its own number).
func reaches(services []corev1.Service, cp corev1.ContainerPort) bool {
	for _, svc := range services {
		for _, sp := range svc.Spec.Ports {
			target := sp.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(sp.Port)
			}
			if targets(target, cp) {
				return true
			}
		}
	}
	return false
}

// selecting returns the Services whose (non-empty) selector matches podLabels.
func selecting(services []corev1.Service, podLabels map[string]string) []corev1.Service {
	var out []corev1.Service
	for _, svc := range services {
		if len(svc.Spec.Selector) > 0 && subset(svc.Spec.Selector, podLabels) {
			out = append(out, svc)
		}
	}
	return out
}

// checkReferences asserts that every Secret and ConfigMap a pod uses exists
// with the keys it reads, and that each file a *_FILE variable or an
// INTERNAL_PUBLIC_KEYS entry names is a key of a Secret volume mounted
// read-only at the file's directory (so the services get the public keys and
// each signer its private one).
func checkReferences(t *testing.T, r rendered, owner string, spec corev1.PodSpec) {
	t.Helper()
	for _, c := range spec.Containers {
		where := owner + ", container " + c.Name
		for _, e := range c.Env {
			checkEnvRef(t, r, where, e)
			files, err := keyFiles(e)
			if err != nil {
				t.Errorf("%s: %v", where, err)
			}
			for _, file := range files {
				if secretFile(r, spec, c, file) == nil {
					t.Errorf("%s: %s: %s is no key of a Secret volume mounted read-only at %s", where, e.Name, file, path.Dir(file))
				}
			}
		}
		for _, from := range c.EnvFrom {
			if from.ConfigMapRef != nil && findConfigMap(r, from.ConfigMapRef.Name) == nil {
				t.Errorf("%s: envFrom ConfigMap %q not found", where, from.ConfigMapRef.Name)
			}
			if from.SecretRef != nil && findSecret(r, from.SecretRef.Name) == nil {
				t.Errorf("%s: envFrom Secret %q not found", where, from.SecretRef.Name)
			}
		}
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil && findSecret(r, v.Secret.SecretName) == nil {
			t.Errorf("%s: volume %s: Secret %q not found", owner, v.Name, v.Secret.SecretName)
		}
	}
}

func checkEnvRef(t *testing.T, r rendered, where string, e corev1.EnvVar) {
	t.Helper()
	if e.ValueFrom == nil {
		return
	}
	if ref := e.ValueFrom.SecretKeyRef; ref != nil {
		if s := findSecret(r, ref.Name); s == nil || s.Data[ref.Key] == nil {
			t.Errorf("%s: env %s: Secret %q has no key %q", where, e.Name, ref.Name, ref.Key)
		}
	}
	if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
		if cm := findConfigMap(r, ref.Name); cm == nil || cm.Data[ref.Key] == "" {
			t.Errorf("%s: env %s: ConfigMap %q has no key %q", where, e.Name, ref.Name, ref.Key)
		}
	}
}

// keyFiles returns the files an env variable names: its value for *_FILE,
// the paths of its name=path entries for INTERNAL_PUBLIC_KEYS.
func keyFiles(e corev1.EnvVar) ([]string, error) {
	switch {
	case strings.HasSuffix(e.Name, "_FILE"):
		return []string{e.Value}, nil
	case e.Name == "INTERNAL_PUBLIC_KEYS":
		issuers, err := parseInternalKeys(e.Value)
		return slices.Sorted(maps.Values(issuers)), err
	}
	return nil, nil
}

// parseInternalKeys reads INTERNAL_PUBLIC_KEYS ("name=path,name2=path2") into
// issuer name => file, as platform/config does.
func parseInternalKeys(value string) (map[string]string, error) {
	issuers := map[string]string{}
	for entry := range strings.SplitSeq(value, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		name, file, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok || name == "" || file == "" {
			return issuers, fmt.Errorf("INTERNAL_PUBLIC_KEYS entry %q: want name=path", entry)
		}
		issuers[name] = file
	}
	return issuers, nil
}

// secretFile returns the content of file as container c sees it when file
// lies in a Secret volume mounted read-only at the file's directory, or nil.
func secretFile(r rendered, spec corev1.PodSpec, c corev1.Container, file string) []byte {
	if !path.IsAbs(file) {
		return nil
	}
	dir, name := path.Split(file)
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) != path.Clean(dir) || !m.ReadOnly || m.SubPath != "" {
			continue
		}
		i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 || spec.Volumes[i].Secret == nil {
			continue
		}
		vol := spec.Volumes[i].Secret
		key := name
		if len(vol.Items) > 0 {
			j := slices.IndexFunc(vol.Items, func(item corev1.KeyToPath) bool { return item.Path == name })
			if j < 0 {
				continue
			}
			key = vol.Items[j].Key
		}
		if s := findSecret(r, vol.SecretName); s != nil && s.Data[key] != nil {
			return s.Data[key]
		}
	}
	return nil
}

func findSecret(r rendered, name string) *corev1.Secret {
	i := slices.IndexFunc(r.secrets, func(s corev1.Secret) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return &r.secrets[i]
}

func findConfigMap(r rendered, name string) *corev1.ConfigMap {
	i := slices.IndexFunc(r.configMaps, func(cm corev1.ConfigMap) bool { return cm.Name == name })
	if i < 0 {
		return nil
	}
	return &r.configMaps[i]
}

func envValue(c corev1.Container, name string) string {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return ""
	}
	return c.Env[i].Value
}

// subset reports whether every pair of want is in got.
func subset(want, got map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func ptr[T any](v T) *T { return &v }
