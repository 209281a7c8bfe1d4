using System.Globalization;
using Microsoft.Extensions.Options;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests;

/// <summary>
/// The bookkeeping between polls and the correlation, on poll results as the client's typed calls
/// return them (what a real server says is covered by the live tests): intervals, restarts, slow-log
/// counts, and a timeout settled once, under its final cause, after its endpoint's next poll.
/// </summary>
public sealed class ServerTimelineTests
{
    internal const string Endpoint = "10.0.0.7:6379";
    internal static readonly DateTimeOffset T0 = DateTimeOffset.Parse("2026-11-22T12:00:00Z", CultureInfo.InvariantCulture);

    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private readonly MuxWatchMetrics _metrics;
    private readonly ServerTimeline _timeline = new(Endpoint, TimeSpan.FromHours(1));
    private readonly ServerStateTracker _tracker;

    public ServerTimelineTests()
    {
        _metrics = new MuxWatchMetrics(_registry);
        _tracker = new ServerStateTracker(_timeline, _metrics);
    }

    internal static MetricsText Scrape(CollectorRegistry registry)
    {
        using var stream = new MemoryStream();
        registry.CollectAndExportAsTextAsync(stream).GetAwaiter().GetResult();
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }

    internal static ServerPollResult Poll(double atSeconds, params (string Key, string Value)[] info) =>
        new(Endpoint, T0.AddSeconds(atSeconds), T0.AddSeconds(atSeconds + 0.01))
        {
            Info = Info(info),
            Slowlog = [],
        };

    private static Dictionary<string, string> Info(params (string Key, string Value)[] overrides)
    {
        var info = new Dictionary<string, string>
        {
            ["run_id"] = "a1", ["uptime_in_seconds"] = "100", ["loading"] = "0", ["rdb_bgsave_in_progress"] = "0",
            ["rdb_current_bgsave_time_sec"] = "-1", ["rdb_last_bgsave_status"] = "ok", ["rdb_saves"] = "0", ["rdb_last_save_time"] = "1700000000",
            ["aof_rewrite_in_progress"] = "0", ["aof_last_bgrewrite_status"] = "ok", ["aof_rewrites"] = "0", ["module_fork_in_progress"] = "0",
            ["latest_fork_usec"] = "0", ["total_forks"] = "0", ["current_cow_size"] = "0",
        };
        foreach (var (key, value) in overrides)
        {
            info[key] = value;
        }

        return info;
    }

    [Fact]
    public void A_bgsave_seen_running_then_done_is_one_interval_no_narrower_than_the_polls_can_prove()
    {
        _tracker.Apply(Poll(0));
        _tracker.Apply(Poll(1, ("rdb_bgsave_in_progress", "1"), ("rdb_current_bgsave_time_sec", "0"), ("total_forks", "1"), ("latest_fork_usec", "340000")));
        Assert.Equal(1, Scrape(_registry).Value("muxwatch_server_rdb_bgsave_in_progress"));
        _tracker.Apply(Poll(2, ("rdb_bgsave_in_progress", "1"), ("rdb_current_bgsave_time_sec", "1"), ("total_forks", "1"), ("latest_fork_usec", "340000")));
        _tracker.Apply(Poll(3, ("rdb_saves", "1"), ("total_forks", "1"), ("latest_fork_usec", "340000"), ("rdb_last_save_time", "1700000003")));

        var saves = _timeline.Events().Where(e => e.Kind == ServerEventKind.Bgsave).ToList();
        var save = Assert.Single(saves); // rdb_saves moved too, but that is the same save
        Assert.Equal(T0, save.Start); // the poll before the one that saw it
        Assert.Equal(T0.AddSeconds(3.01), save.End);
        Assert.Equal("ok", save.Outcome);
        var fork = Assert.Single(_timeline.Events(), e => e.Kind == ServerEventKind.Fork);
        Assert.Equal(340, fork.DurationMs);
        var metrics = Scrape(_registry);
        Assert.Equal(0, metrics.Value("muxwatch_server_rdb_bgsave_in_progress"));
        Assert.Equal(1, metrics.Value("muxwatch_server_forks_total"));
        Assert.Equal(0.34, metrics.Value("muxwatch_server_latest_fork_seconds"));
        Assert.Equal(T0.AddSeconds(3), _timeline.CompleteThrough);
    }

    [Fact]
    public void A_save_that_starts_and_ends_between_two_polls_is_still_seen()
    {
        _tracker.Apply(Poll(0));
        _tracker.Apply(Poll(1, ("rdb_saves", "1"), ("total_forks", "1"), ("latest_fork_usec", "900")));

        var save = Assert.Single(_timeline.Events(), e => e.Kind == ServerEventKind.Bgsave);
        Assert.True(save.BetweenPolls);
        Assert.Equal(T0, save.Start);
        Assert.Equal(T0.AddSeconds(1.01), save.End);
    }

    [Fact]
    public void A_restart_is_recorded_its_counters_start_again_and_nothing_is_counted_twice()
    {
        _tracker.Apply(Poll(0, ("total_forks", "5")) with { Slowlog = [new SlowlogEntry(41, T0, TimeSpan.FromMilliseconds(20), "KEYS")] });
        _tracker.Apply(Poll(1, ("total_forks", "6")) with { Slowlog = [new SlowlogEntry(43, T0.AddSeconds(1), TimeSpan.FromMilliseconds(30), "KEYS")] });
        _tracker.Apply(Poll(2, ("run_id", "b2"), ("uptime_in_seconds", "1"), ("total_forks", "1")) with
        {
            Slowlog = [new SlowlogEntry(0, T0.AddSeconds(2), TimeSpan.FromMilliseconds(50), "DEBUG")],
        });

        var metrics = Scrape(_registry);
        Assert.Equal(1, metrics.Value("muxwatch_server_restarts_total"));
        Assert.Equal(2, metrics.Value("muxwatch_server_forks_total")); // +1 before, +1 after the restart
        Assert.Equal(3, metrics.Value("muxwatch_server_slowlog_entries_total")); // ids 42 and 43, then 0 after the restart
        Assert.Single(_timeline.Events(), e => e.Kind == ServerEventKind.Restart);
        Assert.Equal(["KEYS", "KEYS", "DEBUG"], _timeline.Events().Where(e => e.Kind == ServerEventKind.SlowCommand).OrderBy(e => e.Start).Select(e => e.Command));
    }

    [Fact]
    public void A_field_an_older_server_lacks_is_not_exported_and_a_refused_command_is_reported()
    {
        var old = Info();
        old.Remove("total_forks");
        old.Remove("current_cow_size");
        _tracker.Apply(new ServerPollResult(Endpoint, T0, T0) { Info = old, Refused = ["slowlog"] });

        var metrics = Scrape(_registry);
        Assert.Null(metrics.Value("muxwatch_server_forks_total"));
        Assert.Null(metrics.Value("muxwatch_server_cow_size_bytes"));
        Assert.Equal(1, metrics.Value("muxwatch_server_command_refused", ("command", "slowlog")));
        Assert.Null(metrics.Value("muxwatch_server_command_refused", ("command", "info"))); // answered: no series at 0
        Assert.Equal(["slowlog"], _timeline.Status().RefusedCommands);

        _tracker.Apply(new ServerPollResult(Endpoint, T0.AddSeconds(1), T0.AddSeconds(1)) { Info = old });
        Assert.Null(Scrape(_registry).Value("muxwatch_server_command_refused", ("command", "slowlog"))); // answered again: gone
    }

    /// <summary>Issue 26, #6: values no clock survives (2^63-1, 10^11 seconds) used to throw on every poll, silently.</summary>
    [Fact]
    public void Overflowing_values_from_a_hostile_server_are_not_believed_and_polling_goes_on()
    {
        const string Max = "9223372036854775807";
        _tracker.Apply(Poll(0));
        var hostile = Poll(1, ("rdb_bgsave_in_progress", "1"), ("rdb_current_bgsave_time_sec", "100000000000"), ("total_forks", Max),
            ("uptime_in_seconds", Max), ("run_id", "b2"), ("latest_fork_usec", Max)) with
        {
            Slowlog = [new SlowlogEntry(long.MaxValue, DateTimeOffset.MaxValue, TimeSpan.MaxValue, "GET")],
            ForkHistory = [new LatencySample(DateTimeOffset.MaxValue, double.MaxValue)],
        };

        Assert.True(_tracker.Apply(hostile), _timeline.Status().LastPollError);
        Assert.True(_tracker.Apply(Poll(2, ("rdb_bgsave_in_progress", "0"))));

        var status = _timeline.Status();
        Assert.Null(status.LastPollError);
        Assert.Equal(T0.AddSeconds(2), _timeline.CompleteThrough);
        Assert.Equal(0, Scrape(_registry).Value("muxwatch_server_poll_failures_total") ?? 0);
    }

    /// <summary>
    /// What the server logged is placed on this process's clock by the offset read with <c>TIME</c>, which may be off by half
    /// that read's round trip: a slow command is widened by that much on each side (by a second at most, whatever a
    /// hostile server's held-up reply made of it).
    /// </summary>
    [Fact]
    public void A_slow_command_is_placed_by_the_servers_clock_and_widened_by_how_far_that_reading_may_be_off()
    {
        _tracker.Apply(Poll(0) with { ClockOffset = TimeSpan.FromMilliseconds(300), ClockUncertainty = TimeSpan.FromMilliseconds(200) });
        _tracker.Apply(Poll(20) with { Slowlog = [new SlowlogEntry(3, T0.AddSeconds(10), TimeSpan.FromSeconds(2), "DEBUG")] });
        var sleep = Assert.Single(_timeline.Events(), e => e.Kind == ServerEventKind.SlowCommand);
        Assert.Equal(T0.AddMilliseconds(10_000 - 300 - 2000 - 200), sleep.Start); // logged at 10 s of the server's clock, 9.7 s of ours
        Assert.Equal(T0.AddMilliseconds(10_000 - 300 + 1000 + 200), sleep.End); // in whole seconds: it may have ended up to a second later

        _tracker.Apply(Poll(40) with { ClockOffset = TimeSpan.Zero, ClockUncertainty = TimeSpan.FromHours(1) });
        _tracker.Apply(Poll(60) with { Slowlog = [new SlowlogEntry(4, T0.AddSeconds(50), TimeSpan.FromSeconds(2), "DEBUG")] });
        var next = Assert.Single(_timeline.Events(), e => e.Kind == ServerEventKind.SlowCommand && e.SlowlogId == 4);
        Assert.Equal(T0.AddSeconds(50 - 2 - 1), next.Start);
        Assert.Equal(T0.AddSeconds(50 + 1 + 1), next.End); // widened by a second at most
    }

    /// <summary>Issue 26, #3: the slowest-of-five-minutes list kept every entry a server returned, and future-stamped ones forever.</summary>
    [Fact]
    public void A_server_that_returns_more_slow_log_entries_than_asked_or_stamps_them_in_the_future_costs_a_bounded_list()
    {
        _tracker.Apply(Poll(0));
        for (var poll = 1; poll <= 50; poll++)
        {
            var entries = Enumerable.Range(0, 1000).Select(i => new SlowlogEntry((poll * 1000L) + i, T0.AddYears(5), TimeSpan.FromMilliseconds(20), "KEYS")).ToList();
            _tracker.Apply(Poll(poll) with { Slowlog = entries });
        }

        Assert.Equal(50 * ServerStateTracker.MaxSlowlogEntriesPerPoll, _timeline.Events().Count(e => e.Kind == ServerEventKind.SlowCommand));
        Assert.True(_tracker.RecentSlowCount <= 1024, $"{_tracker.RecentSlowCount} kept");

        // Five minutes later the future-stamped entries have aged out like any other.
        _tracker.Apply(Poll(400));
        Assert.Equal(0, _tracker.RecentSlowCount);
        Assert.Equal(0, Scrape(_registry).Value("muxwatch_server_slowest_recent_command_seconds"));
    }

    /// <summary>Issue 26, #4: 1 MB latency event names made a 42 MB scrape; one hostile server used up a cap every endpoint shared.</summary>
    [Fact]
    public void A_hostile_servers_latency_event_names_are_bounded_and_leave_a_healthy_servers_alone()
    {
        var healthy = new ServerStateTracker(new ServerTimeline("10.0.0.8:6379", TimeSpan.FromHours(1)), _metrics);
        var hostileSpikes = Enumerable.Range(0, 200).Select(i => new LatencySpike($"made-up-{i}", T0, 10, 10))
            .Append(new LatencySpike(new string('x', 1_000_000), T0, 10, 10))
            .Append(new LatencySpike("bad name\n{}", T0, 10, 10))
            .ToList();

        _tracker.Apply(Poll(0) with { LatencyLatest = hostileSpikes });
        healthy.Apply(new ServerPollResult("10.0.0.8:6379", T0, T0.AddSeconds(0.01)) { Info = Info(), Slowlog = [], LatencyLatest = [new LatencySpike("command", T0, 150, 150), new LatencySpike("custom-module-event", T0, 12, 12)] });

        var metrics = Scrape(_registry);
        var hostile = metrics.Samples("muxwatch_server_latency_spike_seconds", ("endpoint", Endpoint));
        Assert.Equal(MuxWatchMetrics.MaxLatencyEvents + 1, hostile.Select(s => s.Labels["event"]).Distinct().Count()); // 16 names and "other"
        Assert.All(hostile, s => Assert.True(s.Labels["event"].Length <= MuxWatchMetrics.MaxLatencyEventNameLength));
        Assert.True(metrics.Text.Length < 64 * 1024, $"{metrics.Text.Length} bytes scraped");
        Assert.Equal(0.15, metrics.Value("muxwatch_server_latency_spike_seconds", ("endpoint", "10.0.0.8:6379"), ("event", "command")));
        Assert.Equal(0.012, metrics.Value("muxwatch_server_latency_spike_seconds", ("endpoint", "10.0.0.8:6379"), ("event", "custom-module-event")));
    }

    [Fact]
    public void A_client_side_cause_keeps_priority_and_the_server_event_is_listed_as_contributing()
    {
        var report = TimeoutMessageReader.Read("Timeout performing GET k (1000ms), qu: 0, qs: 6, in: 0, WORKER: (Busy=40,Free=1,Min=8,Max=41)");
        var starved = TimeoutDiagnoser.Diagnose(report);
        ServerEvent[] events = [new(ServerEventKind.Bgsave, T0, null)];

        var refined = TimelineCorrelation.Refine(starved, events, T0.AddSeconds(1), T0.AddSeconds(2));

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, refined.Cause);
        Assert.Equal([TimeoutCause.ThreadPoolStarvation, TimeoutCause.Persistence], refined.Causes);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("persistence: BGSAVE in progress since 12:00:00.0", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
    }

    [Fact]
    public void The_timeline_keeps_an_hour_and_at_most_its_cap_whatever_the_input()
    {
        var timeline = new ServerTimeline(Endpoint, TimeSpan.FromHours(1));
        timeline.Log.Add(new ServerEvent(ServerEventKind.SlowCommand, T0, T0.AddSeconds(1)), T0.AddSeconds(1));
        for (var i = 0; i < ServerTimeline.MaxEvents + 5; i++)
        {
            var at = T0.AddMinutes(61).AddMilliseconds(i);
            timeline.Log.Add(new ServerEvent(ServerEventKind.SlowCommand, at, at) { SlowlogId = i }, at);
        }

        var events = timeline.Events();
        Assert.Equal(ServerTimeline.MaxEvents, events.Count);
        Assert.DoesNotContain(events, e => e.Start == T0); // ended more than an hour before the newest: gone
        Assert.Equal(5, timeline.Log.DroppedEvents); // the cap dropped the oldest 5 of the newer ones
        Assert.Equal(5, events[0].SlowlogId);
    }

    [Fact]
    public void Events_added_out_of_order_are_found_by_the_window_they_overlap_and_expire_in_order()
    {
        var timeline = new ServerTimeline(Endpoint, TimeSpan.FromHours(1));
        var now = T0.AddMinutes(10);
        timeline.Log.Add(new ServerEvent(ServerEventKind.SlowCommand, T0.AddMinutes(5), T0.AddMinutes(5).AddSeconds(1)) { SlowlogId = 2 }, now);
        timeline.Log.Add(new ServerEvent(ServerEventKind.Bgsave, T0, T0.AddMinutes(6)), now); // a long save, ended after the command
        timeline.Log.Add(new ServerEvent(ServerEventKind.SlowCommand, T0.AddMinutes(1), T0.AddMinutes(1).AddSeconds(1)) { SlowlogId = 1 }, now); // logged late

        Assert.Equal([ServerEventKind.Bgsave, ServerEventKind.SlowCommand],
            timeline.Overlapping(T0.AddMinutes(1), T0.AddMinutes(1).AddSeconds(5), now).Select(e => e.Kind)); // by start
        Assert.Equal([ServerEventKind.Bgsave], timeline.Overlapping(T0.AddMinutes(3), T0.AddMinutes(3).AddSeconds(5), now).Select(e => e.Kind));
        Assert.Equal(3, timeline.Overlapping(T0, T0.AddMinutes(9), now).Count);
        Assert.Empty(timeline.Overlapping(T0.AddMinutes(7), T0.AddMinutes(8), now));

        // An hour after the command ended, only the later two are kept.
        timeline.Log.Add(new ServerEvent(ServerEventKind.SlowCommand, T0.AddMinutes(61).AddSeconds(30), T0.AddMinutes(61).AddSeconds(30)), T0.AddMinutes(61).AddSeconds(30));
        Assert.DoesNotContain(timeline.Events(), e => e.SlowlogId == 1);
        Assert.Contains(timeline.Events(), e => e.SlowlogId == 2);
    }

    [Fact]
    public void A_node_no_other_node_lists_has_left_its_cluster_a_failed_one_still_listed_has_not_and_an_unheld_one_is_unknown()
    {
        var timelines = new ServerTimelines(Options.Create(new MuxWatchOptions()));
        string[] held = ["10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379", "10.0.0.4:6379"];
        timelines.GetOrAdd(held[0]).NoteClusterMembers([held[0], held[1], held[2], "10.0.0.9:6379"]); // .3 forgotten, .9 added, .2 listed (failed)
        timelines.GetOrAdd(held[1]); // killed: no list of its own
        timelines.GetOrAdd(held[2]).NoteClusterMembers([held[2], held[0], held[1], "10.0.0.9:6379"]);
        timelines.GetOrAdd(held[3]).NoteClusterMembers([held[3]]); // reset by del-node: lists only itself, vouches for nothing

        var membership = timelines.FollowCluster(held);

        Assert.Equal(["10.0.0.4:6379"], membership.Left.Order());
        Assert.Equal(["10.0.0.9:6379"], membership.Unknown.Order());
    }

    [Fact]
    public void Lists_that_name_nodes_otherwise_than_the_client_prove_nothing_and_no_list_at_all_leaves_everything()
    {
        var timelines = new ServerTimelines(Options.Create(new MuxWatchOptions()));
        string[] held = ["cache-1:6379", "cache-2:6379"];

        Assert.Same(ClusterMembership.None, timelines.FollowCluster(held)); // not polled yet, or no cluster

        // Behind NAT the nodes list their private addresses, not the names the client connects to.
        timelines.GetOrAdd(held[0]).NoteClusterMembers(["172.17.0.2:6379", "172.17.0.3:6379"]);
        timelines.GetOrAdd(held[1]).NoteClusterMembers(["172.17.0.3:6379", "172.17.0.2:6379"]);
        Assert.Empty(timelines.FollowCluster(held).Left);

        // A one-node cluster: no other node to say it left.
        var single = new ServerTimelines(Options.Create(new MuxWatchOptions()));
        single.GetOrAdd("10.0.0.1:6379").NoteClusterMembers(["10.0.0.1:6379"]);
        Assert.Empty(single.FollowCluster(["10.0.0.1:6379"]).Left);
    }
}
