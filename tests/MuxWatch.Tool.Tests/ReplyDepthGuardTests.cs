using System.Text;
using MuxWatch.Testing;
using MuxWatch.Tool.Transport;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The guard under MuxWatch's own connections, on replies as bytes: every real shape passes however the reads split it,
/// and only nesting past the bound (or what is not RESP) fails the read; then in a sidecar polling a hostile server.
/// Not a LiveProbe test: the supported floor's client (2.6.90) has no tunnel to put the guard in, and there the
/// hostile server would end the test process.
/// </summary>
public sealed class ReplyDepthGuardTests
{
    /// <summary>Replies as Redis sends them: a slow-log entry (3 levels), a map, nulls, bulk strings holding CR LF and '*'.</summary>
    private const string RealReplies =
        "+PONG\r\n" + "-ERR unknown command\r\n" + ":42\r\n" + "$-1\r\n" + "*-1\r\n" + "*0\r\n" + "_\r\n" + ",3.14\r\n" + "#t\r\n" + "(12345678901234567890\r\n"
        + "$11\r\n*2\r\n$1\r\nx\r\n\r\n"
        + "*1\r\n*6\r\n:14\r\n:1700000000\r\n:25000\r\n*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n$15\r\n127.0.0.1:51234\r\n$14\r\nnightly-export\r\n"
        + "%2\r\n+server\r\n+redis\r\n+modules\r\n*0\r\n"
        + "=15\r\ntxt:Some string\r\n" + ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n";

    [Fact]
    public void Real_replies_pass_however_the_reads_split_them()
    {
        var bytes = Encoding.ASCII.GetBytes(RealReplies);
        foreach (var chunk in new[] { 1, 2, 3, 7, bytes.Length })
        {
            var nesting = new RespNesting(ReplyDepthGuard.MaxDepth);
            for (var at = 0; at < bytes.Length; at += chunk)
            {
                nesting.Scan(bytes.AsSpan(at, Math.Min(chunk, bytes.Length - at)));
            }

            Assert.Equal(0, nesting.Depth);
        }
    }

    [Theory]
    [InlineData(32, false)]
    [InlineData(33, true)]
    [InlineData(200_000, true)]
    public void A_reply_nested_past_the_bound_fails_the_read(int depth, bool fails)
    {
        var reply = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("*1\r\n", depth)) + ":1\r\n+PONG\r\n");
        using var guard = new ReplyDepthGuard(new MemoryStream(reply));
        var buffer = new byte[4096];

        var read = () =>
        {
            while (guard.Read(buffer) > 0)
            {
            }
        };

        if (fails)
        {
            Assert.Contains("nested deeper than 32 levels", Assert.Throws<IOException>(read).Message, StringComparison.Ordinal);
        }
        else
        {
            read();
        }
    }

    [Fact]
    public void What_is_not_resp_fails_the_read()
    {
        var nesting = new RespNesting(ReplyDepthGuard.MaxDepth);

        Assert.Throws<IOException>(() => nesting.Scan("HTTP/1.1 400 Bad Request\r\n"u8));
        Assert.Throws<IOException>(() => new RespNesting(32).Scan("*12x\r\n"u8));
    }

    [Fact]
    public async Task A_slow_log_nested_deeper_than_any_real_reply_drops_the_polls_connection_and_the_sidecar_goes_on()
    {
        // SLOWLOG GET answered with an array 200,000 levels deep: the client reads replies by recursion, and the sidecar
        // died of a stack overflow (and its PINGs timed out behind the reply meanwhile). The guard under its own
        // connections drops the connection at 33 levels; the poll fails as a connection failure, and the target is
        // PINGed again on the new connection.
        var nested = System.Text.Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("*1\r\n", 200_000)) + ":1\r\n");
        var slowlogs = 0;
        await using var hostile = HostileRedis.Start(command =>
        {
            if (command is ["SLOWLOG", ..])
            {
                Interlocked.Increment(ref slowlogs);
                return nested;
            }

            return null;
        });
        await using var sidecar = InMemorySidecar.Probing(("hostile", hostile.EndPoint));

        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_poll_failures_total", ("endpoint", hostile.EndPoint), ("reason", "connection")) >= 2,
            "two polls failed on the dropped connection");
        var pings = (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_ping_seconds_count", ("multiplexer", "hostile")) ?? 0;
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_ping_seconds_count", ("multiplexer", "hostile")) >= pings + 3,
            "three more PINGs answered afterwards");
        Assert.True(Volatile.Read(ref slowlogs) >= 2);
    }
}
