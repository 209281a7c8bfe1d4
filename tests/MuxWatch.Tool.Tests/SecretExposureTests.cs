using System.Text;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// No password or user name from any connection string or message appears anywhere MuxWatch writes:
/// metrics, every API answer, the log at its most verbose, failures included.
/// </summary>
[Trait("Category", "ServiceProcess")] // run once more on the container's native build by test.sh
public sealed class SecretExposureTests : IAsyncLifetime
{
    private const string Password = "pw-NEVER-shown-4711";
    private const string User = "user-NEVER-shown-0815";
    private const string WrongPassword = "wrong-NEVER-shown-1234";
    private const string PostedSecret = "posted-NEVER-shown-9999";
    private const string QueryToken = "query-token-NEVER-shown-2468";
    private RedisServer _redis = null!;

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync("--requirepass", Password);
        await _redis.CommandAsync("ACL", "SETUSER", User, "on", $">{Password}", "~*", "&*", "+@all");
    }

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task Every_output_is_free_of_credentials_after_every_path_failures_included()
    {
        await using var service = await ServiceProcess.StartAsync(
            "--Logging:LogLevel:Default=Trace", "--Logging:LogLevel:Microsoft=Trace",
            "--MuxWatch:ProbeInterval=00:00:00.200", "--MuxWatch:PingInterval=00:00:00.200", "--MuxWatch:ServerPollInterval=00:00:00.200",
            "--MuxWatch:Targets:0:Name=good", $"--MuxWatch:Targets:0:ConnectionString={_redis.EndPoint},user={User},password={Password},asyncTimeout=300",
            "--MuxWatch:Targets:1:Name=wrong", $"--MuxWatch:Targets:1:ConnectionString={_redis.EndPoint},user={User},password={WrongPassword},connectTimeout=500",
            "--MuxWatch:Targets:2:Name=nowhere", $"--MuxWatch:Targets:2:ConnectionString=no-such-host.invalid:6379,password={Password},connectTimeout=500",
            "--MuxWatch:Targets:3:Name=url", $"--MuxWatch:Targets:3:ConnectionString=127.0.0.1:{FreePort.Next()},password={Password},connectTimeout=500");

        // A stall (the probe's own timeouts), posts with credentials in every form, a refused post.
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(service.Client)).Value("muxwatch_connected", ("multiplexer", "good")) == 1, "the good target connected");
        await _redis.CommandAsync("DEBUG", "SLEEP", "2.5"); // redis-cli authenticates through REDISCLI_AUTH
        var posted = string.Join('\n',
            $"{{\"message\": \"Timeout performing GET k (5000ms), qs: 1, in: 0, note: redis://{User}:{PostedSecret}@h:6379\"}}",
            $"{{\"message\": \"host:6379,password=\\\"{PostedSecret}\\\",user={User} Timeout performing GET k (5000ms), qs: 1\"}}",
            $"{{\"message\": \"REDIS_PASSWORD={PostedSecret} Timeout performing GET k (5000ms), qs: 1\", \"time\": \"not a time {PostedSecret}\"}}",
            $"not json password={PostedSecret}");
        using var answer = await service.Client.PostAsync(new Uri("/api/timeouts?details=true", UriKind.Relative), new StringContent(posted, Encoding.UTF8, "application/x-ndjson"));
        using var careless = await service.Client.GetAsync(new Uri($"/api/timeouts?limit=1&access_token={QueryToken}", UriKind.Relative)); // a careless client's token in a query string
        using var refused = await service.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent($"password={PostedSecret}", Encoding.UTF8, "text/plain"));
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(service.Client)).Value("muxwatch_timeouts_total", ("multiplexer", "good")) >= 1, "the stall's timeout counted");

        var everything = new StringBuilder()
            .AppendLine(await answer.Content.ReadAsStringAsync())
            .AppendLine(await refused.Content.ReadAsStringAsync());
        foreach (var path in (string[])["/metrics", "/api/timeouts?limit=1000", "/api/targets", "/api/events", "/api/status", "/healthz"])
        {
            everything.AppendLine(await service.Client.GetStringAsync(new Uri(path, UriKind.Relative)));
        }

        everything.AppendLine(service.Output);
        var text = everything.ToString();
        Assert.Contains("wrong", text, StringComparison.Ordinal); // the failing targets were exercised and reported
        foreach (var secret in (string[])[Password, User, WrongPassword, PostedSecret, QueryToken])
        {
            var at = text.IndexOf(secret, StringComparison.Ordinal);
            Assert.True(at < 0, $"'{secret}' shown: ...{text[Math.Max(0, at - 300)..Math.Min(text.Length, at + 100)]}...");
        }
    }
}
