namespace MuxWatch.StackExchangeRedis.Tests;

/// <summary>
/// When the calm polls are due: on one tick while few endpoints are polled (an idle app's PING and poll share one
/// wake), spread over the probe ticks of the interval when many are (a sidecar at 500 servers polls a tenth a tick,
/// not all at once). Driven tick by tick over a clock, as the probe loop calls it.
/// </summary>
public sealed class CadenceTests
{
    private static readonly TimeSpan Tick = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan Calm = TimeSpan.FromSeconds(10);

    /// <summary>For each probe tick over <paramref name="seconds"/>, how many of <paramref name="endpoints"/> start a calm poll.</summary>
    private static List<int> PollsPerTick(List<string> endpoints, int seconds)
    {
        var start = new DateTimeOffset(2026, 11, 27, 21, 0, 0, 300, TimeSpan.Zero); // a tick 300 ms past the second, as a loop's are
        var last = endpoints.ToDictionary(e => e, _ => DateTimeOffset.MinValue);
        var perTick = new List<int>();
        for (var second = 0; second < seconds; second++)
        {
            var now = start + (Tick * second);
            var due = 0;
            foreach (var endpoint in endpoints)
            {
                if (Cadence.InNewSlot(last[endpoint], now, Calm, Cadence.PhaseOf(endpoint, endpoints.Count, Tick)))
                {
                    last[endpoint] = now;
                    due++;
                }
            }

            perTick.Add(due);
        }

        return perTick;
    }

    [Fact]
    public void Few_endpoints_poll_on_one_tick_each_interval()
    {
        var endpoints = Enumerable.Range(1, 10).Select(i => $"10.0.0.{i}:6379").ToList();

        var perTick = PollsPerTick(endpoints, 40);

        // The first tick polls every endpoint; then every 10 s, all on the same tick.
        Assert.Equal(10, perTick[0]);
        Assert.All(perTick.Skip(1), n => Assert.True(n is 0 or 10, $"{n} endpoints polled on one tick"));
        Assert.Equal(3, perTick.Skip(1).Count(n => n == 10));
    }

    [Fact]
    public void Five_hundred_endpoints_spread_their_calm_polls_over_the_interval_each_still_once_an_interval()
    {
        var endpoints = Enumerable.Range(0, 500).Select(i => $"127.0.0.{1 + (i % 10)}:{17000 + (i / 10)}").ToList();

        var perTick = PollsPerTick(endpoints, 61);

        // After the first tick (every endpoint's first poll), each endpoint polls once in every 10 s, and no tick
        // carries more than a quarter of them (a tenth on average; the lanes come from the endpoints' names).
        var steady = perTick.Skip(11).Take(50).ToList();
        Assert.Equal(5 * endpoints.Count, steady.Sum());
        Assert.All(steady, n => Assert.InRange(n, 1, endpoints.Count / 4));
    }
}
