using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests;

/// <summary>
/// The fleet as the third witness, in its parts: the one query it sends Prometheus, when an incident's reading is due,
/// how the fleet's verdict weighs on the incident's cause, and a Prometheus that cannot be read. The whole path, real
/// apps, a real Prometheus evaluating the shipped rules and a real Alertmanager, is FleetEndToEndTests.
/// </summary>
public sealed class FleetWitnessTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 28, 3, 0, 0, TimeSpan.Zero);

    private readonly ManualTimeProvider _clock = new(T0);
    private readonly RecentIncidents _incidents;
    private readonly TimeoutPipeline _pipeline;

    public FleetWitnessTests()
    {
        _incidents = new RecentIncidents(_clock);
        _pipeline = new TimeoutPipeline([new MessageRulesStep()], [_incidents]);
    }

    private void Starved(string endpoint) => _pipeline.Submit(new TimeoutObservation(_clock.GetUtcNow(), TimeoutSources.Api, TimeoutMessageReader.Read(
        $"Timeout performing GET key (5000ms), inst: 2, qu: 0, qs: 6, in: 0, serverEndpoint: {endpoint}, IOCP: (Busy=6,Free=994,Min=4,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 2.6.90.64945")));

    [Fact]
    public void The_query_asks_for_the_rules_four_figures_of_the_endpoint_over_the_span_with_the_name_escaped()
    {
        var query = FleetQuery.Query("redis\"0\\a:6379", TimeSpan.FromSeconds(135));

        foreach (var series in (string[])["muxwatch:fleet_instances_watching:1m", "muxwatch:fleet_instances_affected:1m", "muxwatch:fleet_verdict:server_side", "muxwatch:fleet_verdict:instance_side"])
        {
            Assert.Contains(series + "{endpoint=\"redis\\\"0\\\\a:6379\"}[135s]", query, StringComparison.Ordinal);
        }

        Assert.Equal(4, query.Split(" or ").Length);
        Assert.DoesNotContain("\n", FleetQuery.Escaped("a\nb\u0001c"), StringComparison.Ordinal);
        Assert.Equal(300, FleetQuery.Escaped(new string('x', 5000)).Length);
    }

    [Fact]
    public void The_query_time_is_written_as_Prometheus_reads_it_in_an_app_whose_culture_writes_a_decimal_comma()
    {
        var comma = (System.Globalization.CultureInfo)System.Globalization.CultureInfo.InvariantCulture.Clone();
        comma.NumberFormat.NumberDecimalSeparator = ",";
        var before = System.Globalization.CultureInfo.CurrentCulture;
        System.Globalization.CultureInfo.CurrentCulture = comma;
        try
        {
            var uri = FleetQuery.RequestUri("up", DateTimeOffset.FromUnixTimeMilliseconds(1_795_910_474_123)).ToString();
            Assert.EndsWith("&time=1795910474.123", uri, StringComparison.Ordinal);
            Assert.StartsWith("api/v1/query?query=up", uri, StringComparison.Ordinal);
        }
        finally
        {
            System.Globalization.CultureInfo.CurrentCulture = before;
        }
    }

    [Theory]
    [InlineData(TimeoutCause.ThreadPoolStarvation, FleetVerdict.InstanceSide, true, "The fleet agrees")]
    [InlineData(TimeoutCause.GcPause, FleetVerdict.InstanceSide, true, "The fleet agrees")]
    [InlineData(TimeoutCause.ServerStall, FleetVerdict.ServerSide, true, "The fleet agrees")]
    [InlineData(TimeoutCause.Persistence, FleetVerdict.ServerSide, true, "The fleet agrees")]
    [InlineData(TimeoutCause.ServerStall, FleetVerdict.InstanceSide, false, "look at this instance first")]
    [InlineData(TimeoutCause.SlowCommand, FleetVerdict.InstanceSide, false, "look at this instance first")]
    [InlineData(TimeoutCause.ThreadPoolStarvation, FleetVerdict.ServerSide, false, "look at the server or the network every client shares")]
    [InlineData(TimeoutCause.ConnectionLoss, FleetVerdict.ServerSide, null, null)]
    [InlineData(TimeoutCause.LargePayload, FleetVerdict.InstanceSide, null, null)]
    [InlineData(TimeoutCause.ServerStall, FleetVerdict.None, null, null)]
    public void The_fleets_verdict_agrees_with_a_cause_on_its_side_and_says_where_to_look_when_not(TimeoutCause cause, FleetVerdict verdict, bool? agrees, string? says)
    {
        var reading = FleetWeighing.Weigh(new FleetReading(T0, T0, 4, verdict == FleetVerdict.ServerSide ? 4 : 1, verdict), cause);

        Assert.Equal(agrees, reading.Agrees);
        if (says is null)
        {
            Assert.Null(reading.Weighing);
        }
        else
        {
            Assert.Contains(says, reading.Weighing, StringComparison.Ordinal);
            Assert.Contains(cause.ToName(), reading.Weighing, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData(0, 0, FleetVerdict.None, "knew no instance watching")]
    [InlineData(1, 1, FleetVerdict.None, "no fleet to compare with")]
    [InlineData(4, 4, FleetVerdict.ServerSide, "4 of 4 instances watching redis:6379 timed out on it or lost it: most of them")]
    [InlineData(12, 1, FleetVerdict.InstanceSide, "1 of 12 instances watching redis:6379 timed out on it or lost it; the others")]
    [InlineData(5, 2, FleetVerdict.None, "too split for a verdict")]
    public void What_the_fleet_said_is_one_sentence_with_its_figures(int watching, int affected, FleetVerdict verdict, string says) =>
        Assert.Contains(says, FleetQuery.Say("redis:6379", watching, affected, verdict), StringComparison.Ordinal);

    [Fact]
    public void An_incident_is_read_once_its_last_timeout_is_old_enough_and_again_when_a_later_one_joins_it()
    {
        var delay = TimeSpan.FromSeconds(20); // shorter than an incident's quiet time: it is read while still open
        Starved("10.0.0.1:6379");
        Starved("unknown");
        Assert.Empty(_incidents.DueForFleet(_clock.GetUtcNow(), delay, 10));

        _clock.Advance(delay);
        var due = Assert.Single(_incidents.DueForFleet(_clock.GetUtcNow(), delay, 10)); // an endpoint no message named is never asked for
        Assert.Equal(("10.0.0.1:6379", T0 - TimeSpan.FromSeconds(5), T0), (due.Endpoint, due.Start, due.LastTimeout));

        // A reading so far (the minute after the last timeout not all evaluated) is read again once the witness's next turn comes.
        _incidents.AddFleetReading(due.Id, due.LastTimeout, new FleetReading(due.Start, _clock.GetUtcNow(), 4, 0, FleetVerdict.None) { Text = "0 of 4" }, _clock.GetUtcNow() + TimeSpan.FromSeconds(5));
        Assert.Empty(_incidents.DueForFleet(_clock.GetUtcNow(), delay, 10));
        _clock.Advance(TimeSpan.FromSeconds(5));
        Assert.Single(_incidents.DueForFleet(_clock.GetUtcNow(), delay, 10));

        _incidents.AddFleetReading(due.Id, due.LastTimeout, new FleetReading(due.Start, due.LastTimeout + TimeSpan.FromMinutes(1), 4, 1, FleetVerdict.InstanceSide) { Text = "1 of 4", Complete = true }, _clock.GetUtcNow());
        Assert.Empty(_incidents.DueForFleet(_clock.GetUtcNow(), delay, 10));
        var read = _incidents.Find(due.Id)!.Fleet!;
        Assert.Equal(("1 of 4", true), (read.Text, read.Agrees)); // weighed against the incident's cause: starvation, instance side
        Assert.StartsWith("The fleet agrees", read.Weighing, StringComparison.Ordinal);

        _clock.Advance(TimeSpan.FromSeconds(10));
        Starved("10.0.0.1:6379"); // joins the incident (within its quiet time): read again once it is old enough
        Assert.Empty(_incidents.DueForFleet(_clock.GetUtcNow(), delay, 10));
        _clock.Advance(delay);
        Assert.Equal(due.Id, Assert.Single(_incidents.DueForFleet(_clock.GetUtcNow(), delay, 10)).Id);
    }

    [Fact]
    public async Task A_Prometheus_that_cannot_be_reached_is_counted_and_tried_three_times_and_the_incident_stands()
    {
        var registry = Metrics.NewCustomRegistry();
        var metrics = new MuxWatchMetrics(registry);
        var closed = FreePort.Next(); // nothing listens: the connection is refused
        var options = Options.Create(new MuxWatchOptions { FleetPrometheusUrl = new Uri($"http://127.0.0.1:{closed}"), FleetReadDelay = TimeSpan.FromSeconds(5) });
        using var witness = new FleetWitness(_incidents, options, metrics, _clock, NullLogger<FleetWitness>.Instance);
        Starved("10.0.0.1:6379");

        for (var attempt = 1; attempt <= RecentIncidents.MaxFleetFailures + 1; attempt++)
        {
            _clock.Advance(TimeSpan.FromSeconds(6));
            await witness.ReadDueAsync(CancellationToken.None);
        }

        using var exported = new MemoryStream();
        await registry.CollectAndExportAsTextAsync(exported);
        var text = new MetricsText(System.Text.Encoding.UTF8.GetString(exported.ToArray()));
        Assert.Equal(RecentIncidents.MaxFleetFailures, text.Samples("muxwatch_probe_failures_total", ("probe", "fleet"), ("reason", "unreachable")).Single().Value);
        var incident = Assert.Single(_incidents.Newest());
        Assert.Null(incident.Fleet);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, incident.Cause);
    }

    [Fact]
    public async Task A_Prometheus_that_never_answers_costs_one_bounded_wait()
    {
        using var silent = new TcpListener(IPAddress.Loopback, 0); // accepts, never answers
        silent.Start();
        using var query = new FleetQuery(new Uri($"http://127.0.0.1:{((IPEndPoint)silent.LocalEndpoint).Port}/prometheus"));
        var failed = await Assert.ThrowsAsync<FleetQueryException>(() => query.ReadAsync("10.0.0.1:6379", T0, T0, T0, CancellationToken.None));

        Assert.Equal("timeout", failed.Reason); // its own bound ended the wait, not the test's
        Assert.Contains($"within {FleetQuery.Timeout.TotalSeconds:0} s", failed.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("http://user:hunter2@prometheus:9090", "must not hold a user name or password")]
    [InlineData("ftp://prometheus:9090", "must be an http or https address")]
    [InlineData("http://prometheus:9090/?x=1", "without a query")]
    public void A_fleet_address_that_cannot_be_used_is_refused_at_start_naming_the_setting(string url, string problem)
    {
        var result = new MuxWatchOptionsValidator().Validate(null, new MuxWatchOptions { FleetPrometheusUrl = new Uri(url) });

        Assert.True(result.Failed);
        var failure = Assert.Single(result.Failures!);
        Assert.StartsWith("MuxWatch:FleetPrometheusUrl ", failure, StringComparison.Ordinal);
        Assert.Contains(problem, failure, StringComparison.Ordinal);
        Assert.DoesNotContain("hunter2", failure, StringComparison.Ordinal);
    }
}
