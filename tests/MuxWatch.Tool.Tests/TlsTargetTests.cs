using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// Sidecar targets over TLS (<c>ssl=true</c>) against a real TLS-only redis-server whose certificate a
/// test CA signed: trusted through <c>MuxWatch:Targets:N:TrustedCaFile</c> it is probed and polled like
/// any target; refused (no CA, another CA, a name it does not carry) the target says why, naming the
/// setting, and never the password. Both client generations.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class TlsTargetTests : IAsyncLifetime
{
    private const string Password = "tls-secret-do-not-show";
    private TlsRedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await TlsRedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task A_target_whose_certificate_chains_to_the_configured_CA_is_probed_polled_and_its_saves_seen()
    {
        using var sidecar = InMemorySidecar.Probing([("tls", $"{_redis.EndPoint},ssl=true")], [("MuxWatch:Targets:0:TrustedCaFile", _redis.CaFile)]);
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            return metrics.Value("muxwatch_connected", ("multiplexer", "tls")) == 1
                && metrics.Value("muxwatch_ping_seconds_count", ("multiplexer", "tls")) > 0
                && metrics.Value("muxwatch_server_last_poll_success_timestamp_seconds", ("endpoint", _redis.EndPoint)) > 0;
        }, "the TLS target connected, PINGed and polled");

        // The witness checks the certificate as the poller does (the configured CA), and is answered over TLS (before the
        // fix it spoke plain TCP to the TLS port: the guard on MuxWatch's connections leaves their options ssl=false).
        var polling = string.Empty;
        try
        {
            await Eventually.UntilAsync(async () =>
            {
                using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={_redis.EndPoint}", UriKind.Relative)));
                var status = events.RootElement.GetProperty("endpoints")[0].GetProperty("polling");
                polling = status.ToString();
                return status.GetProperty("witnessAnsweredAt").ValueKind == JsonValueKind.String;
            }, "the witness answered over TLS");
        }
        catch (TimeoutException ex)
        {
            throw new TimeoutException($"{ex.Message}; the endpoint's polling status then: {polling}", ex); // why (a refusal, a lost witness) is in it
        }

        Assert.Contains("\"witnessRefused\":null", polling, StringComparison.Ordinal);

        await _redis.CommandAsync("DEBUG", "POPULATE", "1000");
        await _redis.CommandAsync("BGSAVE");
        await Eventually.UntilAsync(async () =>
        {
            using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={_redis.EndPoint}", UriKind.Relative)));
            return events.RootElement.GetProperty("endpoints")[0].GetProperty("events").EnumerateArray().Any(e => e.GetProperty("kind").GetString() == "bgsave");
        }, "the BGSAVE on the TLS server's timeline");
    }

    [Theory]
    // The server presents its CA beside its certificate (OpenSSL completes the chain from its CA file), so the chain
    // ends at that CA, not trusted here: UntrustedRoot.
    [InlineData("no CA configured", "", null, "is not trusted here (its root CA is not trusted: UntrustedRoot); set MuxWatch:Targets:0:TrustedCaFile", "TLS: ")]
    [InlineData("another CA", "", "other", "does not chain to the CA in MuxWatch:Targets:0:TrustedCaFile", "UntrustedRoot")]
    [InlineData("a name the certificate does not carry", ",sslHost=cache.example.com", "right", "RemoteCertificateNameMismatch", "sslHost=")]
    public async Task A_refused_certificate_is_named_in_the_target_the_log_and_the_metrics_without_the_password(string why, string extra, string? ca, string expected, string alsoExpected)
    {
        (string, string)[] trust = ca switch
        {
            "other" => [("MuxWatch:Targets:0:TrustedCaFile", _redis.OtherCaFile)],
            "right" => [("MuxWatch:Targets:0:TrustedCaFile", _redis.CaFile)],
            _ => [],
        };
        using var sidecar = InMemorySidecar.Probing([("tls", $"{_redis.EndPoint},ssl=true,password={Password},connectTimeout=1000{extra}")], trust);

        string lastError = string.Empty;
        await Eventually.UntilAsync(async () =>
        {
            using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
            var target = targets.RootElement.GetProperty("targets")[0];
            lastError = target.GetProperty("lastError").GetString() ?? string.Empty;
            return target.GetProperty("state").GetString() != "connected" && lastError.Length > 0;
        }, $"{why}: the target refused, with a reason");

        Assert.Contains(expected, lastError, StringComparison.Ordinal);
        Assert.True(lastError.Contains(alsoExpected, StringComparison.Ordinal), lastError);
        Assert.StartsWith("TLS: ", lastError, StringComparison.Ordinal);
        Assert.Contains(expected, sidecar.LogText, StringComparison.Ordinal);
        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        Assert.NotEqual(1, metrics.Value("muxwatch_connected", ("multiplexer", "tls")));
        var everything = lastError + sidecar.LogText + metrics.Text + await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative));
        Assert.DoesNotContain(Password, everything, StringComparison.Ordinal);
    }
}
