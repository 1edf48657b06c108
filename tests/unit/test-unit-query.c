/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The edge to systemd (unit-query.h) against a stand-in PID 1: a child
 * process serving systemd's D-Bus API for a few units on a socket in a
 * temporary directory, as sd-bus serves it on /run/systemd/private.
 *
 *   - every property type is read: the address lists (a(iayu)), the
 *     accounting bool, the filter paths (as), BPFProgram (a(ss): its
 *     ingress and egress entries only), RestrictNetworkInterfaces ((bas),
 *     asked only of a systemd with +BPF_FRAMEWORK);
 *   - a unit without a cgroup now is placed by its slice; a slice's
 *     address lists make the units below it count; units that attach
 *     nothing, not loaded, without a cgroup type, or gone between the
 *     list and the question, are left out;
 *   - an event's cgroups: only the units whose own cgroup they are;
 *   - no socket: -ENOENT, said.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "tests.h"
#include "unit-query.h"
#include "util.h"

struct fake_unit {
	const char *name;
	const char *load;
	const char *control_group;
	const char *slice;
	const char *deny;      /* an address for IPAddressDeny=, or NULL */
	bool accounting;
	const char *egress_path;
	const char *bpf_type;  /* BPFProgram= entry's type, or NULL */
	const char *iface;     /* RestrictNetworkInterfaces= entry, or NULL */
	bool serve;            /* has an object (else: gone after the list) */
};

static const struct fake_unit fake_units[] = {
	{ "-.slice", "loaded", "/", "", .serve = true },
	{ "a.slice", "loaded", "/a.slice", "-.slice", .deny = "10.0.0.1", .serve = true },
	{ "leaf.service", "loaded", "/a.slice/leaf.service", "a.slice", .serve = true },
	{ "idle.service", "loaded", "", "a-b.slice", .accounting = true, .serve = true },
	{ "web.service", "loaded", "/system.slice/web.service", "system.slice", .deny = "127.0.0.5",
	  .bpf_type = "sock_create", .serve = true },
	{ "out.service", "loaded", "/system.slice/out.service", "system.slice", .egress_path = "/sys/fs/bpf/x",
	  .serve = true },
	{ "prog.scope", "loaded", "/system.slice/prog.scope", "system.slice", .bpf_type = "ingress", .serve = true },
	{ "ifaces.service", "loaded", "/system.slice/ifaces.service", "system.slice", .iface = "lo", .serve = true },
	{ "plain.service", "loaded", "/system.slice/plain.service", "system.slice", .serve = true },
	{ "masked.service", "masked", "", "system.slice", .deny = "1.1.1.1", .serve = true },
	{ "multi-user.target", "loaded", "", "", .serve = true },
	{ "gone.service", "loaded", "/system.slice/gone.service", "system.slice", .deny = "1.1.1.1" },
	{ "cpu.service", "loaded", "/system.slice/_cpu.service", "system.slice", .deny = "1.1.1.1", .serve = true },
	{ "moved.service", "loaded", "/elsewhere/moved.service", "system.slice", .deny = "1.1.1.1", .serve = true },
};

struct fake {
	const char *features;
	unsigned asked_ifaces; /* RestrictNetworkInterfaces requests seen */
};

/* ---- the stand-in's properties ------------------------------------------- */

static int get_string(sd_bus *b _unused_, const char *path _unused_, const char *iface _unused_, const char *prop,
		      sd_bus_message *reply, void *userdata, sd_bus_error *e _unused_) {
	const struct fake_unit *u = userdata;

	return sd_bus_message_append(reply, "s", streq(prop, "Slice") ? u->slice : u->control_group);
}

static int get_addresses(sd_bus *b _unused_, const char *path _unused_, const char *iface _unused_,
			 const char *prop, sd_bus_message *reply, void *userdata, sd_bus_error *e _unused_) {
	const struct fake_unit *u = userdata;
	const uint8_t addr[4] = { 10, 0, 0, 1 };
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(iayu)");
	if (r >= 0 && u->deny && streq(prop, "IPAddressDeny")) {
		r = sd_bus_message_open_container(reply, 'r', "iayu");
		if (r >= 0)
			r = sd_bus_message_append(reply, "i", AF_INET);
		if (r >= 0)
			r = sd_bus_message_append_array(reply, 'y', addr, sizeof(addr));
		if (r >= 0)
			r = sd_bus_message_append(reply, "u", 32);
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
	}
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int get_accounting(sd_bus *b _unused_, const char *path _unused_, const char *iface _unused_,
			  const char *prop _unused_, sd_bus_message *reply, void *userdata, sd_bus_error *e _unused_) {
	const struct fake_unit *u = userdata;

	return sd_bus_message_append(reply, "b", u->accounting);
}

static int get_paths(sd_bus *b _unused_, const char *path _unused_, const char *iface _unused_, const char *prop,
		     sd_bus_message *reply, void *userdata, sd_bus_error *e _unused_) {
	const struct fake_unit *u = userdata;

	if (u->egress_path && streq(prop, "IPEgressFilterPath"))
		return sd_bus_message_append(reply, "as", 1, u->egress_path);
	return sd_bus_message_append(reply, "as", 0);
}

static int get_bpf_program(sd_bus *b _unused_, const char *path _unused_, const char *iface _unused_,
			   const char *prop _unused_, sd_bus_message *reply, void *userdata, sd_bus_error *e _unused_) {
	const struct fake_unit *u = userdata;

	if (u->bpf_type)
		return sd_bus_message_append(reply, "a(ss)", 2, "device", "/sys/fs/bpf/d", u->bpf_type,
					     "/sys/fs/bpf/p");
	return sd_bus_message_append(reply, "a(ss)", 1, "device", "/sys/fs/bpf/d");
}

static struct fake *the_fake;

static int get_ifaces(sd_bus *b _unused_, const char *path _unused_, const char *iface _unused_,
		      const char *prop _unused_, sd_bus_message *reply, void *userdata, sd_bus_error *e _unused_) {
	const struct fake_unit *u = userdata;

	the_fake->asked_ifaces++;
	if (u->iface)
		return sd_bus_message_append(reply, "(bas)", true, 1, u->iface);
	return sd_bus_message_append(reply, "(bas)", true, 0);
}

static const sd_bus_vtable unit_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("ControlGroup", "s", get_string, 0, 0),
	SD_BUS_PROPERTY("Slice", "s", get_string, 0, 0),
	SD_BUS_PROPERTY("IPAddressDeny", "a(iayu)", get_addresses, 0, 0),
	SD_BUS_PROPERTY("IPAddressAllow", "a(iayu)", get_addresses, 0, 0),
	SD_BUS_PROPERTY("IPAccounting", "b", get_accounting, 0, 0),
	SD_BUS_PROPERTY("IPIngressFilterPath", "as", get_paths, 0, 0),
	SD_BUS_PROPERTY("IPEgressFilterPath", "as", get_paths, 0, 0),
	SD_BUS_PROPERTY("BPFProgram", "a(ss)", get_bpf_program, 0, 0),
	SD_BUS_PROPERTY("RestrictNetworkInterfaces", "(bas)", get_ifaces, 0, 0),
	SD_BUS_VTABLE_END,
};

/* ---- the stand-in's manager ---------------------------------------------- */

static int list_units(sd_bus_message *m, void *userdata _unused_, sd_bus_error *e _unused_) {
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssssssouso)");
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(fake_units); i++) {
		_cleanup_free_ char *object = NULL;

		r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", fake_units[i].name, &object);
		if (r >= 0)
			r = sd_bus_message_append(reply, "(ssssssouso)", fake_units[i].name, "", fake_units[i].load,
						  "active", "running", "", object, 0, "", "/");
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int get_features(sd_bus *b _unused_, const char *path _unused_, const char *iface _unused_,
			const char *prop _unused_, sd_bus_message *reply, void *userdata, sd_bus_error *e _unused_) {
	const struct fake *f = userdata;

	return sd_bus_message_append(reply, "s", f->features);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("ListUnits", "", "a(ssssssouso)", list_units, 0),
	SD_BUS_PROPERTY("Features", "s", get_features, 0, 0),
	SD_BUS_VTABLE_END,
};

static const char *interface_of(const char *name) {
	return strstr(name, ".slice") ? "org.freedesktop.systemd1.Slice" :
	       strstr(name, ".scope") ? "org.freedesktop.systemd1.Scope" :
	       strstr(name, ".target") ? "org.freedesktop.systemd1.Target" : "org.freedesktop.systemd1.Service";
}

/* One connection, served until the client closes it; exits with the
 * number of RestrictNetworkInterfaces requests it answered. */
static void serve(int fd, struct fake *f) {
	sd_bus *bus = NULL;
	sd_id128_t id;
	int r;

	the_fake = f;
	REQUIRE(sd_id128_randomize(&id) >= 0);
	REQUIRE(sd_bus_new(&bus) >= 0);
	REQUIRE(sd_bus_set_fd(bus, fd, fd) >= 0);
	REQUIRE(sd_bus_set_server(bus, true, id) >= 0);
	REQUIRE(sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
					 manager_vtable, f) >= 0);
	for (size_t i = 0; i < ELEMENTSOF(fake_units); i++) {
		_cleanup_free_ char *object = NULL;

		if (!fake_units[i].serve)
			continue;
		REQUIRE(sd_bus_path_encode("/org/freedesktop/systemd1/unit", fake_units[i].name, &object) >= 0);
		REQUIRE(sd_bus_add_object_vtable(bus, NULL, object, interface_of(fake_units[i].name), unit_vtable,
						 (void *) &fake_units[i]) >= 0);
	}
	REQUIRE(sd_bus_start(bus) >= 0);
	for (;;) {
		r = sd_bus_process(bus, NULL);
		if (r < 0 || !sd_bus_is_open(bus))
			break;
		if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
			break;
	}
	_exit((int) f->asked_ifaces);
}

/* A stand-in PID 1 listening at path, for one connection. */
static pid_t fake_start(const char *path, const char *features) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int listener, fd;
	pid_t pid;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(listener >= 0);
	(void) unlink(path);
	REQUIRE(bind(listener, (struct sockaddr *) &sa, sizeof(sa)) == 0);
	REQUIRE(listen(listener, 1) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct fake f = { .features = features };

		fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			_exit(100);
		serve(fd, &f);
	}
	close(listener);
	return pid;
}

/* Waits for the stand-in; its exit status: RestrictNetworkInterfaces requests. */
static int fake_wait(pid_t pid) {
	int status;

	REQUIRE(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- tests --------------------------------------------------------------- */

static char *table(const struct cgf_unit_firewalls *u) {
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	REQUIRE(f);
	for (size_t i = 0; i < u->n; i++)
		fprintf(f, "%s %s %s 0x%x\n", u->units[i].unit, u->units[i].cgroup, u->units[i].active ? "running" : "idle",
			u->units[i].settings);
	REQUIRE(fclose(f) == 0);
	return s;
}

static void test_read_units(struct test_state *t, const char *dir, bool bpf_framework) {
	_cleanup_free_ char *path = NULL, *error = NULL, *got = NULL;
	struct cgf_unit_firewalls u = {};
	size_t asked = 0;
	pid_t pid;
	int r, ifaces;

	REQUIRE(asprintf(&path, "%s/private", dir) >= 0);
	pid = fake_start(path, bpf_framework ? "+PAM +BPF_FRAMEWORK +SECCOMP" : "+PAM -BPF_FRAMEWORK +SECCOMP");
	r = cgf_systemd_read_units_from(path, &u, &asked, &error);
	ifaces = fake_wait(pid);
	CHECK(t, r == 0, "read the units: %d %s", r, error ?: "");
	/* Loaded and of a type with a cgroup: not masked.service, not the target. */
	CHECK(t, asked == 12, "%zu units asked about", asked);
	got = table(&u);
	CHECK_STREQ(t, got,
		    bpf_framework ?
			"a.slice a.slice running 0x1\n"
			"leaf.service a.slice/leaf.service running 0x0\n"
			"idle.service a.slice/a-b.slice/idle.service idle 0x4\n"
			"web.service system.slice/web.service running 0x1\n"
			"out.service system.slice/out.service running 0x10\n"
			"prog.scope system.slice/prog.scope running 0x20\n"
			"ifaces.service system.slice/ifaces.service running 0x80\n"
			"cpu.service system.slice/_cpu.service running 0x1\n"
			"moved.service elsewhere/moved.service running 0x1\n" :
			"a.slice a.slice running 0x1\n"
			"leaf.service a.slice/leaf.service running 0x0\n"
			"idle.service a.slice/a-b.slice/idle.service idle 0x4\n"
			"web.service system.slice/web.service running 0x1\n"
			"out.service system.slice/out.service running 0x10\n"
			"prog.scope system.slice/prog.scope running 0x20\n"
			"cpu.service system.slice/_cpu.service running 0x1\n"
			"moved.service elsewhere/moved.service running 0x1\n",
		    "the units that attach programs, each where systemd attaches them");
	if (bpf_framework)
		CHECK(t, ifaces == 11, "RestrictNetworkInterfaces asked of every unit there is (%d)", ifaces);
	else
		CHECK(t, ifaces == 0, "RestrictNetworkInterfaces not asked without +BPF_FRAMEWORK (%d)", ifaces);
	cgf_unit_firewalls_done(&u);
}

static void test_read_cgroups(struct test_state *t, const char *dir) {
	_cleanup_free_ char *path = NULL, *error = NULL, *got = NULL;
	char *cgroups[] = {
		"system.slice/web.service",  /* its own */
		"system.slice/_cpu.service", /* cg_escape()'s '_' */
		"system.slice/moved.service", /* the unit's cgroup is elsewhere */
		"system.slice/gone.service", /* no such unit any more */
		"system.slice/plain.service", /* attaches nothing */
		"system.slice/payload",      /* not a unit's name */
	};
	struct cgf_unit_firewalls u = {};
	pid_t pid;
	int r;

	REQUIRE(cgf_unit_firewalls_add(&u, "web.service", "old/web.service", false, 4) == 0);
	REQUIRE(asprintf(&path, "%s/private", dir) >= 0);
	pid = fake_start(path, "+PAM");
	r = cgf_systemd_read_cgroups_from(path, cgroups, ELEMENTSOF(cgroups), &u, &error);
	(void) fake_wait(pid);
	CHECK(t, r == 3, "three cgroups were their units' own (plain.service's attaches nothing): %d %s", r,
	      error ?: "");
	got = table(&u);
	CHECK_STREQ(t, got,
		    "web.service system.slice/web.service running 0x1\n"
		    "cpu.service system.slice/_cpu.service running 0x1\n",
		    "an event's cgroups: the units whose own they are, the old entry replaced");
	cgf_unit_firewalls_done(&u);
}

static void test_no_systemd(struct test_state *t, const char *dir) {
	_cleanup_free_ char *path = NULL, *error = NULL;
	struct cgf_unit_firewalls u = {};
	int r;

	REQUIRE(asprintf(&path, "%s/none", dir) >= 0);
	r = cgf_systemd_read_units_from(path, &u, NULL, &error);
	CHECK(t, r == -ENOENT && error && strstr(error, "no systemd to ask"), "no socket: -ENOENT (%d, %s)", r,
	      error ?: "");
	CHECK(t, u.n == 0, "nothing read");
}

int main(void) {
	struct test_state t = {};
	char dir[] = "/tmp/test-unit-query-XXXXXX";

	REQUIRE(mkdtemp(dir));
	/* A stand-in that dies must not kill the test with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	test_read_units(&t, dir, false);
	test_read_units(&t, dir, true);
	test_read_cgroups(&t, dir);
	test_no_systemd(&t, dir);
	{
		_cleanup_free_ char *socket_path = NULL;

		REQUIRE(asprintf(&socket_path, "%s/private", dir) >= 0);
		(void) unlink(socket_path);
		(void) rmdir(dir);
	}
	return test_finish(&t, "unit-query");
}
