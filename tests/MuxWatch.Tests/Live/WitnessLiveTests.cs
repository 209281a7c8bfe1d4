using System.Net;
using Microsoft.Extensions.Options;
using MuxWatch.Testing;

namespace MuxWatch.Tests.Live;

/// <summary>
/// MuxWatch's own plain connection (the witness) against real servers: answered by a server that wants a
/// password without ever sending one (its NOAUTH is an answer), over TLS, silent while the server's process is
/// stopped, and the server unreachable once it is killed, each on the endpoint's timeline.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class WitnessLiveTests
{
    [Fact]
    public async Task A_server_that_wants_a_password_answers_the_witness_which_never_sends_one()
    {
        await using var redis = await RedisServer.StartAsync("--requirepass", "the-password-5678");
        using var witnessing = Witnessing(redis.EndPoint, tlsHost: null);

        await Eventually.UntilAsync(() => witnessing.Timeline.Status().WitnessAnsweredAt is not null, "the witness answered");

        // Every redis-cli call of this test authenticates once (AUTH), the witness's PINGs never: while three more
        // PINGs were answered (NOAUTH), AUTH grew by this test's own calls and no more.
        var calls = 0;
        Task<string> InfoAsync()
        {
            calls++;
            return redis.CommandAsync("INFO", "all");
        }

        var before = await InfoAsync();
        calls = 0;
        var after = before;
        await Eventually.UntilAsync(async () => Count(after = await InfoAsync(), "errorstat_NOAUTH:count=") >= Count(before, "errorstat_NOAUTH:count=") + 3, "three more PINGs answered NOAUTH");
        Assert.Equal(Count(before, "cmdstat_auth:calls=") + calls, Count(after, "cmdstat_auth:calls="));
        Assert.Equal(0, Count(after, "cmdstat_hello:calls="));
    }

    private static long Count(string info, string prefix)
    {
        var at = info.IndexOf(prefix, StringComparison.Ordinal);
        if (at < 0)
        {
            return 0;
        }

        var digits = info[(at + prefix.Length)..].TakeWhile(char.IsAsciiDigit).ToArray();
        return long.Parse(digits, System.Globalization.CultureInfo.InvariantCulture);
    }

    [Fact]
    public async Task A_tls_only_server_answers_the_witness()
    {
        await using var redis = await TlsRedisServer.StartAsync();
        using var witnessing = Witnessing(redis.EndPoint, tlsHost: "localhost");

        await Eventually.UntilAsync(() => witnessing.Timeline.Status().WitnessAnsweredAt is not null, "the witness answered over TLS");
        Assert.True(witnessing.Timeline.Status().WitnessRoundTripMs < 100);
    }

    [Fact]
    public async Task A_stopped_server_is_a_silence_and_a_killed_one_unreachable_on_its_timeline()
    {
        await using var redis = await RedisServer.StartAsync();
        using var witnessing = Witnessing(redis.EndPoint, tlsHost: null);
        await Eventually.UntilAsync(() => witnessing.Timeline.Status().WitnessAnsweredAt is not null, "the witness answered");

        await redis.PauseAsync(TimeSpan.FromSeconds(2));
        await Eventually.UntilAsync(() => witnessing.Timeline.Events().Any(e => e.Kind == ServerEventKind.Silence && !e.InProgress), "the silence recorded and ended");
        var silence = witnessing.Timeline.Events().Single(e => e.Kind == ServerEventKind.Silence);
        Assert.InRange((silence.End!.Value - silence.Start).TotalSeconds, 1.2, 10);

        await redis.KillAsync();
        await Eventually.UntilAsync(() => witnessing.Timeline.Events().Any(e => e.Kind == ServerEventKind.Unreachable), "the server unreachable");
        Assert.NotNull(witnessing.Timeline.Status().WitnessSilentSince);

        await redis.RestartAsync();
        await Eventually.UntilAsync(() => witnessing.Timeline.Events().Any(e => e.Kind == ServerEventKind.Unreachable && !e.InProgress), "reachable again", TimeSpan.FromSeconds(15));
        Assert.EndsWith("refused", witnessing.Timeline.Events().Single(e => e.Kind == ServerEventKind.Unreachable).Outcome, StringComparison.Ordinal);
    }

    private static Witnessed Witnessing(string endpoint, string? tlsHost)
    {
        var options = Options.Create(new MuxWatchOptions());
        var timelines = new ServerTimelines(options);
        var timeline = timelines.GetOrAdd(endpoint);
        timeline.WitnessAt(IPEndPoint.Parse(endpoint), tlsHost);
        var thread = new WitnessThread(timelines, new RuntimeHistory(), TimeProvider.System, options);
        thread.StartAsync(CancellationToken.None).GetAwaiter().GetResult();
        return new Witnessed(timeline, thread);
    }

    private sealed record Witnessed(ServerTimeline Timeline, WitnessThread Thread) : IDisposable
    {
        public void Dispose() => Thread.Dispose();
    }
}
