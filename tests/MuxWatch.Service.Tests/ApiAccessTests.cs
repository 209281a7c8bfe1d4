using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Service.Tests;

/// <summary>The API behind a bearer token, and posting beyond the concurrency limit.</summary>
public sealed class ApiAccessTests : IAsyncLifetime
{
    private const string Token = "s3cr3t-token-for-tests-0123456789";
    private static readonly Uri Timeouts = new("/api/timeouts", UriKind.Relative);
    private ServiceProcess _service = null!;

    public async Task InitializeAsync() =>
        _service = await ServiceProcess.StartAsync($"--MuxWatch:Api:BearerToken={Token}", "--MuxWatch:Api:MaxConcurrentPosts=1");

    public async Task DisposeAsync() => await _service.DisposeAsync();

    [Theory]
    [InlineData(null)]
    [InlineData("Bearer wrong-token-0123456789")]
    [InlineData("Basic dXNlcjpwYXNz")]
    [InlineData("Bearer ")]
    public async Task Without_the_right_token_the_api_answers_401_and_never_echoes_the_token(string? authorization)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, Timeouts);
        if (authorization is not null)
        {
            request.Headers.TryAddWithoutValidation("Authorization", authorization);
        }

        using var response = await _service.Client.SendAsync(request);
        var body = await response.Content.ReadAsStringAsync();

        Assert.Equal(HttpStatusCode.Unauthorized, response.StatusCode);
        Assert.Contains("Bearer", response.Headers.WwwAuthenticate.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain(Token, body, StringComparison.Ordinal);
    }

    [Fact]
    public async Task With_the_token_the_api_answers_and_health_needs_none()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, Timeouts);
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Token);

        using var response = await _service.Client.SendAsync(request);
        using var health = await _service.Client.GetAsync(new Uri("/healthz", UriKind.Relative));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
        Assert.DoesNotContain(Token, _service.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_post_beyond_the_concurrency_limit_is_refused_at_once_and_counted()
    {
        // Two POSTs whose bodies do not finish until the test lets them: whichever arrives first holds the
        // only permit, so the other must be refused while both are still open (seen in /api/status).
        var release = new TaskCompletionSource();
        var first = SendHeldAsync(release.Task);
        var second = SendHeldAsync(release.Task);

        await Eventually.UntilAsync(async () => await BusyRefusalsAsync() >= 1, "the second open POST to be refused as busy");
        release.SetResult();
        using var one = await first;
        using var other = await second;

        var statuses = new[] { one.StatusCode, other.StatusCode }.Order().ToArray();
        Assert.Equal([HttpStatusCode.OK, HttpStatusCode.TooManyRequests], statuses);
        var refused = one.StatusCode == HttpStatusCode.TooManyRequests ? one : other;
        Assert.NotNull(refused.Headers.RetryAfter);
    }

    private Task<HttpResponseMessage> SendHeldAsync(Task release)
    {
        var request = new HttpRequestMessage(HttpMethod.Post, Timeouts) { Content = new HeldBody(release) };
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Token);
        return _service.Client.SendAsync(request);
    }

    private async Task<long> BusyRefusalsAsync()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri("/api/status", UriKind.Relative));
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Token);
        using var response = await _service.Client.SendAsync(request);
        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return document.RootElement.GetProperty("postsRefused").GetProperty("busy").GetInt64();
    }

    /// <summary>A request body that sends its first bytes, then waits for the test before finishing.</summary>
    private sealed class HeldBody(Task release) : HttpContent
    {
        protected override async Task SerializeToStreamAsync(Stream stream, System.Net.TransportContext? context)
        {
            await stream.WriteAsync("Timeout performing GET held (5000ms), qu: 0, "u8.ToArray());
            await stream.FlushAsync();
            await release;
            await stream.WriteAsync("qs: 1, in: 0"u8.ToArray());
        }

        protected override bool TryComputeLength(out long length)
        {
            length = 0;
            return false;
        }
    }
}
