using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// Issue 38, #6: a server certificate issued by an intermediate CA (as Azure, AWS and most company CAs issue) was
/// always refused ("PartialChain"), whether <c>TrustedCaFile</c> was the root, the intermediate or a bundle of
/// both. A real TLS-only redis-server presents its certificate and the intermediate; the chain is trusted up to
/// a configured root, or a configured intermediate; an expired intermediate and a wrong root are refused, saying
/// why. Both client generations.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class TlsIntermediateCaTests
{
    [Theory]
    [InlineData("root")]
    [InlineData("intermediate")]
    [InlineData("bundle")]
    public async Task A_certificate_from_an_intermediate_CA_is_trusted_through_the_root_the_intermediate_or_a_bundle(string trusted)
    {
        await using var redis = await TlsRedisServer.StartWithIntermediateAsync();
        var file = trusted switch { "root" => redis.CaFile, "intermediate" => redis.IntermediateFile, _ => redis.BundleFile };
        using var sidecar = InMemorySidecar.Probing([("tls", $"{redis.EndPoint},ssl=true")], [("MuxWatch:Targets:0:TrustedCaFile", file)]);

        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            return metrics.Value("muxwatch_connected", ("multiplexer", "tls")) == 1
                && metrics.Value("muxwatch_ping_seconds_count", ("multiplexer", "tls")) > 0
                && metrics.Value("muxwatch_server_last_poll_success_timestamp_seconds", ("endpoint", redis.EndPoint)) > 0;
        }, $"trusting the {trusted}: connected, PINGed and polled");
    }

    [Theory]
    [InlineData("an expired intermediate", true, "root", "NotTimeValid")]
    [InlineData("a wrong root", false, "other", "does not chain to the CA in MuxWatch:Targets:0:TrustedCaFile")]
    [InlineData("an expired intermediate trusted itself", true, "intermediate", "NotTimeValid")]
    public async Task A_chain_that_cannot_be_trusted_is_refused_saying_why(string why, bool expiredIntermediate, string trusted, string expected)
    {
        await using var redis = await TlsRedisServer.StartWithIntermediateAsync(expiredIntermediate);
        var file = trusted switch { "root" => redis.CaFile, "intermediate" => redis.IntermediateFile, _ => redis.OtherCaFile };
        using var sidecar = InMemorySidecar.Probing([("tls", $"{redis.EndPoint},ssl=true,connectTimeout=1000")], [("MuxWatch:Targets:0:TrustedCaFile", file)]);

        var lastError = string.Empty;
        await Eventually.UntilAsync(async () =>
        {
            using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
            lastError = targets.RootElement.GetProperty("targets")[0].GetProperty("lastError").GetString() ?? string.Empty;
            return lastError.Contains(expected, StringComparison.Ordinal);
        }, $"{why}: the refusal named ({expected})");

        Assert.StartsWith("TLS: the server's certificate was refused", lastError, StringComparison.Ordinal);
        Assert.NotEqual(1, (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_connected", ("multiplexer", "tls")));
    }
}
