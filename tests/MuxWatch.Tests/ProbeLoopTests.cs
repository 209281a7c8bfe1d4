using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Sources;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests;

/// <summary>
/// The probe loop on its own thread: a cycle each interval, and one at once when a source asks for it (the witness does
/// when a server falls silent: the PING of that cycle is what records a short stall).
/// </summary>
public sealed class ProbeLoopTests
{
    [Fact]
    public async Task A_requested_cycle_runs_long_before_the_interval_is_over_and_the_loop_stops_at_once()
    {
        var probe = new CountingProbe();
        using var requests = new ProbeCycleRequests();
        using var loop = NewLoop(probe, TimeSpan.FromHours(1), requests);
        await loop.StartAsync(CancellationToken.None);
        await Eventually.UntilAsync(() => probe.Cycles == 1, "the first cycle");

        requests.Request();
        await Eventually.UntilAsync(() => probe.Cycles == 2, "a second cycle, asked for (the interval is an hour)");

        // An early cycle is followed by a regular wait: a request made now is not heard before the interval (an hour).
        requests.Request();
        await loop.StopAsync(CancellationToken.None);
        Assert.Equal(2, probe.Cycles);
    }

    [Fact]
    public async Task Without_requests_a_cycle_comes_each_interval()
    {
        var probe = new CountingProbe();
        using var loop = NewLoop(probe, TimeSpan.FromMilliseconds(50), requests: null);
        await loop.StartAsync(CancellationToken.None);
        await Eventually.UntilAsync(() => probe.Cycles >= 3, "three cycles at a 50 ms interval");
        await loop.StopAsync(CancellationToken.None);
    }

    private static ProbeLoop NewLoop(IPeriodicProbe probe, TimeSpan interval, ProbeCycleRequests? requests)
    {
        var options = Options.Create(new MuxWatchOptions { ProbeInterval = interval });
        return new ProbeLoop(
            [probe], new MuxWatchMetrics(Metrics.NewCustomRegistry()), new ProbeLoopHealth(TimeProvider.System, options), TimeProvider.System, options,
            NullLogger<ProbeLoop>.Instance, requests);
    }

    private sealed class CountingProbe : IPeriodicProbe
    {
        private int _cycles;

        public int Cycles => Volatile.Read(ref _cycles);

        public string Name => "counting";

        public void Sample(DateTimeOffset now, CancellationToken stopping) => Interlocked.Increment(ref _cycles);
    }
}
