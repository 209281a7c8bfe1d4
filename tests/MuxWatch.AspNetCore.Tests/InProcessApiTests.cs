using System.Net;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.AspNetCore.Tests;

/// <summary>
/// An ASP.NET Core app that adds MuxWatch in-process and maps its endpoints: a timeout thrown anywhere
/// in the app shows up in the app's own <c>/muxwatch/timeouts</c>, diagnosed.
/// </summary>
public sealed class InProcessApiTests : IAsyncLifetime
{
    private WebApplication _app = null!;
    private HttpClient _client = null!;

    public async Task InitializeAsync()
    {
        var port = FreePort.Next();
        var builder = WebApplication.CreateBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        builder.Services.AddMuxWatch();
        _app = builder.Build();
        _app.MapMuxWatchApi();
        _app.MapMuxWatchMetrics();
        await _app.StartAsync();
        _client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}") };
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
    }

    [Fact]
    public async Task A_timeout_thrown_in_the_app_is_listed_by_the_apps_own_endpoint()
    {
        var key = $"inprocess:{Guid.NewGuid():N}";
        try
        {
            throw RealRedisExceptions.Timeout($"Timeout performing GET {key} (5000ms), inst: 0, qu: 0, qs: 4, in: 0, serverEndpoint: 10.1.1.1:6379, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=2,Free=32765,Min=8,Max=32767)");
        }
        catch (StackExchange.Redis.RedisTimeoutException)
        {
            // the app handled it; MuxWatch saw it anyway
        }

        JsonElement entry = default;
        await Eventually.UntilAsync(async () =>
        {
            using var document = JsonDocument.Parse(await _client.GetStringAsync(new Uri("/muxwatch/timeouts?limit=1000", UriKind.Relative)));
            var found = document.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("key").GetString() == key).ToList();
            if (found.Count == 0)
            {
                return false;
            }

            entry = found[0].Clone();
            return true;
        }, "the app's /muxwatch/timeouts to list the timeout");

        Assert.Equal("first-chance", entry.GetProperty("source").GetString());
        Assert.Equal("server-stall", entry.GetProperty("cause").GetString());
        Assert.Equal("10.1.1.1:6379", entry.GetProperty("endpoint").GetString());
        Assert.True(entry.TryGetProperty("threadPoolAtCatch", out _));

        using var status = await _client.GetAsync(new Uri("/muxwatch/status", UriKind.Relative));
        Assert.Equal(HttpStatusCode.OK, status.StatusCode);
        using var statusDocument = JsonDocument.Parse(await status.Content.ReadAsStringAsync());
        Assert.True(statusDocument.RootElement.GetProperty("recordedByCause").GetProperty("server-stall").GetInt64() >= 1);
        Assert.True(statusDocument.RootElement.GetProperty("captureListening").GetBoolean());
        Assert.False(statusDocument.RootElement.TryGetProperty("postsRefused", out _));
    }

    [Fact]
    public async Task The_apps_metrics_answer_whole_with_their_length_in_either_format()
    {
        // An app's scrape fits one chunk (ChunkedScrapeBuffering): sent in one write, the body is whole and its length declared.
        using var text = await _client.GetAsync(new Uri("/metrics", UriKind.Relative));
        var textBody = await text.Content.ReadAsByteArrayAsync();
        Assert.Equal(HttpStatusCode.OK, text.StatusCode);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", text.Content.Headers.ContentType!.ToString());
        Assert.Equal(textBody.Length, text.Content.Headers.ContentLength);
        var parsed = new MetricsText(System.Text.Encoding.UTF8.GetString(textBody));
        Assert.Equal(0, parsed.Value("muxwatch_capture_dropped_total"));

        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri("/metrics", UriKind.Relative));
        request.Headers.TryAddWithoutValidation("Accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"); // as Prometheus asks
        using var openMetrics = await _client.SendAsync(request);
        var openMetricsBody = await openMetrics.Content.ReadAsStringAsync();
        Assert.Equal(HttpStatusCode.OK, openMetrics.StatusCode);
        Assert.StartsWith("application/openmetrics-text", openMetrics.Content.Headers.ContentType!.ToString(), StringComparison.Ordinal);
        Assert.EndsWith("# EOF\n", openMetricsBody, StringComparison.Ordinal);
        Assert.Equal(System.Text.Encoding.UTF8.GetByteCount(openMetricsBody), openMetrics.Content.Headers.ContentLength);
    }
}
