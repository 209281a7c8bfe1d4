using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The API's limits on the real process, where Kestrel and sockets are the point: bodies held open beyond
/// the concurrency limit, a body limit above Kestrel's own, a flood of idle sockets. (The token: <see cref="ApiTokenTests"/>, in memory.)
/// </summary>
[Trait("Category", "ServiceProcess")] // run once more on the container's native build by test.sh
public sealed class ApiLimitsTests : IAsyncLifetime
{
    private const string Token = "s3cr3t-token-for-tests-0123456789";
    private static readonly Uri Timeouts = new("/api/timeouts", UriKind.Relative);
    private ServiceProcess _service = null!;

    public async Task InitializeAsync() =>
        _service = await ServiceProcess.StartAsync($"--MuxWatch:Api:BearerToken={Token}", "--MuxWatch:Api:MaxConcurrentPosts=1", "--MuxWatch:Api:MaxBodyBytes=40000000");

    public async Task DisposeAsync() => await _service.DisposeAsync();

    [Fact]
    public async Task Bodies_that_drip_in_never_hold_the_api_from_other_posts()
    {
        // Eight clients hold their bodies open (MaxConcurrentPosts is 1): a permit is taken only once a body is in.
        var release = new TaskCompletionSource();
        var held = Enumerable.Range(0, 8).Select(_ => SendHeldAsync(release.Task)).ToList();

        using var other = await PostAsync("Timeout performing GET free (5000ms), qu: 0, qs: 1, in: 0");

        release.SetResult();
        foreach (var response in await Task.WhenAll(held))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            response.Dispose();
        }

        Assert.True(other.StatusCode == HttpStatusCode.OK, $"{other.StatusCode}: {await other.Content.ReadAsStringAsync()}");
    }

    [Fact]
    public async Task More_open_bodies_than_reading_slots_are_refused_at_once_and_counted()
    {
        // 64 reading slots (at least 64, 8 per processing slot): the 65th open body is refused while all are open.
        var release = new TaskCompletionSource();
        var held = Enumerable.Range(0, 70).Select(_ => SendHeldAsync(release.Task)).ToList();

        await Eventually.UntilAsync(async () => await BusyRefusalsAsync() >= 1, "an open body beyond the reading slots to be refused as busy");
        release.SetResult();
        var responses = await Task.WhenAll(held);

        var refused = responses.Where(r => r.StatusCode == HttpStatusCode.TooManyRequests).ToList();
        Assert.NotEmpty(refused);
        Assert.All(refused, r => Assert.NotNull(r.Headers.RetryAfter));
        Assert.All(responses.Where(r => r.StatusCode != HttpStatusCode.TooManyRequests), r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        foreach (var response in responses)
        {
            response.Dispose();
        }
    }

    [Fact]
    public async Task A_body_limit_above_kestrels_own_is_the_one_that_applies()
    {
        // MaxBodyBytes is 40,000,000 here: Kestrel's default (30,000,000) must not answer first.
        var big = "Timeout performing GET big (5000ms), qu: 0, qs: 1, in: 0, pad: " + new string('x', 31_000_000);
        using var accepted = await PostAsync(big);

        // Refused from its Content-Length before a byte is read: the client waits for "100 Continue" and never sends it.
        using var tooBig = await PostAsync(big + new string('x', 10_000_000), expectContinue: true);

        Assert.Equal(HttpStatusCode.OK, accepted.StatusCode);
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, tooBig.StatusCode);
        Assert.Contains("40000000", await tooBig.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_flood_of_idle_sockets_beyond_the_connection_limit_does_not_take_the_service_down()
    {
        await using var service = await ServiceProcess.StartAsync("--MuxWatch:Api:MaxConnections=20");
        var sockets = new List<System.Net.Sockets.TcpClient>();
        try
        {
            for (var i = 0; i < 300; i++)
            {
                var socket = new System.Net.Sockets.TcpClient();
                await socket.ConnectAsync("127.0.0.1", service.Port);
                sockets.Add(socket);
            }
        }
        finally
        {
            foreach (var socket in sockets)
            {
                socket.Dispose();
            }
        }

        await Eventually.UntilAsync(async () => (await service.Client.GetAsync(new Uri("/healthz", UriKind.Relative))).IsSuccessStatusCode,
            "the service to answer once the flood is gone");
        Assert.DoesNotContain("Unhandled exception", service.Output, StringComparison.Ordinal);
    }

    private async Task<HttpResponseMessage> PostAsync(string message, bool expectContinue = false)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, Timeouts) { Content = new StringContent(message, Encoding.UTF8, "text/plain") };
        request.Headers.ExpectContinue = expectContinue;
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Token);
        return await _service.Client.SendAsync(request);
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
