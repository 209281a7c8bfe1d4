using System.ComponentModel.DataAnnotations;
using System.Diagnostics.CodeAnalysis;

namespace MuxWatch.Configuration;

/// <summary>Settings of MuxWatch, bound from the <c>MuxWatch</c> configuration section.</summary>
/// <remarks>
/// Each bound is said once, by its <see cref="RangeAttribute"/>: the validator is generated from them
/// (<c>MuxWatchOptionsValidator</c>), and a test holds the README's table of settings to them.
/// </remarks>
[UnconditionalSuppressMessage("Trimming", "IL2026", Justification =
    "The [Range] bounds are read at build time by the source-generated validator (MuxWatchOptionsBounds), which copies them into "
    + "its own attribute and converts the TimeSpan bounds without reflection; nothing reads these attributes at run time.")]
public sealed class MuxWatchOptions
{

    /// <summary>The configuration section these options are bound from.</summary>
    public const string SectionName = "MuxWatch";

    /// <summary>Catch every StackExchange.Redis timeout thrown in this process (default on).</summary>
    public bool CaptureFirstChanceExceptions { get; set; } = true;

    /// <summary>
    /// Watch every StackExchange.Redis multiplexer the process connects, however it was made: the
    /// distributed cache, output caching, the SignalR backplane, Data Protection's key ring, Aspire's
    /// client (default on; needs MuxWatch.StackExchangeRedis in the app). Each is watched like one given to
    /// <c>AddMultiplexer</c>, named after the library that made it, and let go when disposed; one the app
    /// also names with <c>AddMultiplexer</c> is watched once, under that name. The sidecar turns it off: it
    /// watches its configured targets only.
    /// </summary>
    /// <remarks>
    /// Discovery hooks the client's options providers (<c>DefaultOptionsProvider.AfterConnectAsync</c>),
    /// keeping every default the client would have chosen for the endpoint; what it cannot see (a
    /// multiplexer connected before <c>AddMuxWatch()</c>, one whose <c>ConfigurationOptions.Defaults</c> the
    /// app set, an endpoint matched by an options provider of the app's own) is listed in docs/libraries.md.
    /// </remarks>
    public bool DiscoverMultiplexers { get; set; } = true;

    /// <summary>Write each caught timeout's cause and advice to the app's log, at Warning (default on).</summary>
    public bool LogTimeouts { get; set; } = true;

    /// <summary>At most one log line per cause per this interval (default 10 s); the next line counts those left out.</summary>
    [Range(typeof(TimeSpan), "00:00:00", "01:00:00")]
    public TimeSpan TimeoutLogInterval { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>How many recent timeouts are kept for <c>/api/timeouts</c> (default 1000).</summary>
    [Range(1, 100_000)]
    public int RecentTimeoutCapacity { get; set; } = 1000;

    /// <summary>How often the probe loop samples the thread pool and every watched multiplexer (default 1 s).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan ProbeInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Send a PING through each watched multiplexer's endpoints every <see cref="PingInterval"/>, timed into <c>muxwatch_ping_seconds</c> (default on).</summary>
    public bool Ping { get; set; } = true;

    /// <summary>
    /// How often each endpoint is sent a PING (default 10 s; never more often than the probe
    /// cycle). An app's own commands are its timeouts' source and the probe samples their queues every
    /// cycle; the PING adds a round trip that measures the path when the app is quiet. Each one wakes the
    /// client's reader and the thread pool, which costs an idle app more than the rest of the probe
    /// (docs/benchmarks.md, "What watching costs an idle app"), so PINGs and server polls keep one cadence
    /// (aligned to the clock: at 10 s both start on the same tick and share that wake). The sidecar, whose
    /// PINGs are its own only timeouts, sets 5 s in its appsettings.json (1 s cost it 20 ms of CPU a second more at
    /// 500 endpoints). While the witness finds an endpoint silent (<see cref="Witness"/>), it is PINGed every probe
    /// cycle instead (through a multiplexer MuxWatch made, the first at once), so a stall shorter than the interval still
    /// catches a PING in flight.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan PingInterval { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// While this process is quiet (no thread-pool work and no CPU to speak of for 5 s: an idle app), the PINGs come this
    /// many times less often (default 30: every 5 minutes at the default 10 s, on the same clock-aligned ticks as the calm
    /// polls, <see cref="ServerPollQuietMultiple"/>); 1 keeps <see cref="PingInterval"/> always. The counters and each
    /// connection's state are still read every probe cycle, the witness still PINGs the server every 2 s on its own
    /// connection, an endpoint it finds silent is still PINGed every cycle, and the process turning busy brings back the
    /// interval; between two PINGs a connected endpoint with nothing awaiting a reply counts as answered
    /// (<c>muxwatch_last_probe_success_timestamp_seconds</c>). Each PING runs the client's whole command path, which the
    /// JIT compiles three times over once it has run 30 times: every 10 s, that was about a fifth of what an idle app paid
    /// over its first ten minutes (docs/benchmarks.md, "The PING and the poll at the quiet pace"). The sidecar, whose PINGs
    /// are its work, sets 1 in its appsettings.json.
    /// </summary>
    [Range(1, 360)]
    public int PingQuietMultiple { get; set; } = 30;

    /// <summary>
    /// The longest MuxWatch waits for one network call of its own, such as a PING (default 10 s, 100 ms to
    /// 5 minutes). Longer than the client's own timeout by default, so that the client's timeout, with its
    /// diagnosis, surfaces first.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:05:00")]
    public TimeSpan ProbeTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How many endpoints of one multiplexer are probed and polled (default 128). A cluster's
    /// node list comes from its servers: one advertising a thousand nodes would otherwise cost thousands of
    /// series. Those past it are counted in <c>muxwatch_endpoints_over_budget</c> and logged once.
    /// </summary>
    [Range(1, 10_000)]
    public int MaxEndpointsPerMultiplexer { get; set; } = 128;

    /// <summary>How many caught exceptions may wait to be read before more are dropped and counted (default 10000).</summary>
    [Range(1, 1_000_000)]
    public int CaptureQueueCapacity { get; set; } = 10_000;

    /// <summary>
    /// Poll each Redis endpoint of every watched multiplexer for persistence, fork, latency and slow-log
    /// events over a connection of MuxWatch's own, admin allowed (default on).
    /// </summary>
    public bool ServerPolling { get; set; } = true;

    /// <summary>
    /// When a timeout is named <c>large-payload</c> and the huge key is known (the slow log, 3.x's <c>active</c>
    /// field), ask its server once for the key's size (<c>MEMORY USAGE</c>, on MuxWatch's own polling connection, at
    /// most one key every 5 s per endpoint, never a key over 1,024 characters). Off for servers where no key may be
    /// touched: the key is still named, its size not asked (default on).
    /// </summary>
    public bool KeySizes { get; set; } = true;

    /// <summary>
    /// How often each endpoint is polled when nothing is happening (default 10 s; on the
    /// same clock-aligned cadence as the PINGs, see <see cref="PingInterval"/>). Polls
    /// run on the probe loop's ticks, and come sooner when there is something to see: every probe cycle
    /// (at most every second, never less often than this interval) while a save, rewrite, module fork or
    /// load runs on the endpoint, and at the next cycle when a timeout waits for the endpoint's timeline to
    /// be settled. What a poll reads (the slow log, fork samples, save counters and times) is kept by the
    /// server between polls, so a calm interval misses no event (the sidecar keeps this default: at 500 endpoints a 1 s
    /// calm poll cost it 40 ms of CPU a second and each server 5 times the INFO calls; docs/benchmarks.md, "The sidecar at 500 separate endpoints").
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "01:00:00")]
    public TimeSpan ServerPollInterval { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// While this process is quiet (no thread-pool work and no CPU to speak of for 5 s: an idle app), the calm server
    /// poll comes this many times less often (default 30: every 5 minutes at the default 10 s, still on the PINGs' clock-aligned
    /// ticks); 1 keeps <see cref="ServerPollInterval"/> always. A timeout waiting for the endpoint or a save or load running
    /// on it brings the next poll within a second, the process turning busy brings back the calm interval, and what a poll
    /// reads (the slow log, fork samples, save counters and times) is kept by the server in between. A poll runs a handful of
    /// commands and their parsing: once a minute, that was still about 0.6 ms/s of the about 4 an idle app paid over its first
    /// ten minutes, the JIT compiling it three times over once it had run 30 times (docs/benchmarks.md, "The PING and the poll
    /// at the quiet pace"). The sidecar, whose polls are its work, sets 1 in its appsettings.json.
    /// </summary>
    [Range(1, 360)]
    public int ServerPollQuietMultiple { get; set; } = 30;

    /// <summary>
    /// Keep a plain connection of MuxWatch's own to each polled endpoint, on a dedicated thread, and PING the
    /// server on it (default on; needs <see cref="ServerPolling"/>). It is the second witness beside the app's
    /// connection: when the app's requests wait, whether the server answered MuxWatch meanwhile tells a server
    /// that stopped (a paused host, swapping: nothing in the slow log) from an app that could not read (its
    /// pool, a GC pause, its CPU). It sends only PING, never a password (an answer of <c>NOAUTH</c> is an
    /// answer), one connection per endpoint; docs/diagnosis.md, "Two witnesses".
    /// </summary>
    public bool Witness { get; set; } = true;

    /// <summary>
    /// How often the witness PINGs each endpoint while nothing waits for it (default 500 ms);
    /// every 200 ms while a timeout of that endpoint waits to be settled. A timeout is witnessed when a PING
    /// was sent and answered within its wait, so the default suits the client's shortest usual timeouts (500 ms
    /// to 5 s); a PING costs the server about a microsecond.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:01:00")]
    public TimeSpan WitnessInterval { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>
    /// The most PINGs a second the witness sends over all its endpoints while nothing waits for them (default 250):
    /// past it, each endpoint's interval stretches, so that the work grows no faster than that with the endpoints
    /// (a 500-endpoint sidecar PINGs each every 2 s instead of every 500 ms: at a thousand a second its PINGs were
    /// a quarter of its CPU). An endpoint with a timeout waiting is still PINGed every 200 ms.
    /// </summary>
    [Range(10, 100_000)]
    public int WitnessPingsPerSecond { get; set; } = 250;

    /// <summary>
    /// How often the witness PINGs each endpoint while this process is quiet (default 2 s,
    /// never more often than <see cref="WitnessInterval"/>): no pool work and no CPU to speak of for 5 s, as in an
    /// idle app, whose wakes would otherwise be most of what MuxWatch costs it. A server that stalls still leaves
    /// the PING in flight unanswered, and the first timeout hurries the endpoint. The sidecar, whose own quiet
    /// says nothing of the apps that post to it, sets it to the <see cref="WitnessInterval"/> in its appsettings.json.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:01:00")]
    public TimeSpan WitnessQuietInterval { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Hears the runtime's thread-pool events in-process (default on): its thread-count changes and their reasons
    /// (<c>muxwatch_threadpool_adjustments_total</c>; <c>cooperative-blocking</c> is the pool's own account of threads
    /// blocked on tasks). An <c>EventListener</c> on the Threading keyword, from the start and then while the pool has
    /// work to watch (a minute after it was last seen busy or with work queued: an idle pool says nothing, and
    /// listening costs an idle app a wake of the runtime's dispatch thread per worker wait); false listens to nothing.
    /// </summary>
    public bool ThreadPoolEvents { get; set; } = true;

    /// <summary>
    /// When the pool starves (the runtime adds threads because workers blocked on tasks, or because work waited),
    /// capture the stacks of the pool's workers once, for a fraction of a second, in-process (an EventPipe session of
    /// MuxWatch's own, on a thread of its own), and name the app's code where they were blocked or busy: the
    /// <c>thread-pool-starvation</c> timeouts' evidence, <c>/api/status</c>, the page, the log. Needs
    /// <see cref="ThreadPoolEvents"/>, the runtime's diagnostics (not <c>DOTNET_EnableDiagnostics=0</c>) and a JIT
    /// runtime (not Native AOT); where it cannot work, says why (default on).
    /// </summary>
    public bool PoolStackCapture { get; set; } = true;

    /// <summary>
    /// The least time between two stack captures that found a starvation (default 5 minutes): once per
    /// starvation, not per timeout. Re-armed once the pool has been calm 5 s (another episode); a capture that found nobody
    /// blocked (a start-up blip) spends nothing, and two captures are never less than 10 s apart.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:01", "1.00:00:00")]
    public TimeSpan PoolStackCaptureInterval { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>
    /// Publishes every family through the <see cref="System.Diagnostics.Metrics.Meter"/> named <c>MuxWatch</c> too
    /// (default on), created through the app's <c>IMeterFactory</c> as ASP.NET Core, <c>HttpClient</c> and the
    /// runtime create theirs: OpenTelemetry's <c>AddMeter("MuxWatch")</c> and <c>dotnet-counters monitor --counters
    /// MuxWatch</c> see it without anything else to call. Its instruments read the series the prometheus-net
    /// export reads and cost nothing until a listener subscribes; false creates no meter.
    /// </summary>
    public bool Meter { get; set; } = true;

    /// <summary>The longest one poll may take before it counts as failed (default 2 s): the connect and each command time out by it.</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:01:00")]
    public TimeSpan ServerPollTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>How long each endpoint's timeline keeps an event after it ended (default 1 hour).</summary>
    [Range(typeof(TimeSpan), "00:01:00", "1.00:00:00")]
    public TimeSpan ServerTimelineRetention { get; set; } = TimeSpan.FromHours(1);

    /// <summary>
    /// How long a timeout may wait for its endpoint's next successful poll before it is counted with what
    /// is known (default 30 s; 0 never waits).
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00", "00:10:00")]
    public TimeSpan CorrelationSettleTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The Prometheus that scrapes every instance of the fleet and evaluates the shipped fleet rules
    /// (<c>alerts/muxwatch.rules.yml</c>, group <c>muxwatch.fleet</c>), as <c>http://prometheus:9090</c>; unset (the
    /// default), nothing is read. When set, each incident gets what the other instances saw of its endpoint over its span
    /// ("1 of 4 instances timed out on it; the others were answered"), weighed against its cause (docs/fleet.md). Read
    /// through Prometheus' HTTP API, one query at a time, each bounded by 5 s, never in a request's path. An absolute
    /// <c>http</c> or <c>https</c> address without a user name or password in it.
    /// </summary>
    public Uri? FleetPrometheusUrl { get; set; }

    /// <summary>
    /// How long after an incident's last timeout its fleet reading is taken (default 90 s: the rules' one-minute window,
    /// a scrape and an evaluation); read again when a later timeout joins it.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:01", "00:30:00")]
    public TimeSpan FleetReadDelay { get; set; } = TimeSpan.FromSeconds(90);
}
