using System.Net;
using System.Net.Http.Headers;
using System.Text;

namespace MuxWatch.Tool.Tests;

/// <summary>The API behind a bearer token (<c>MuxWatch:Api:BearerToken</c>), on the sidecar hosted in memory.</summary>
public sealed class ApiTokenTests : IDisposable
{
    private const string Token = "s3cr3t-token-for-tests-0123456789";
    private static readonly Uri Timeouts = new("/api/timeouts", UriKind.Relative);
    private readonly InMemorySidecar _sidecar = new(("MuxWatch:Api:BearerToken", Token), ("MuxWatch:Api:MaxConcurrentPosts", "1"));

    public void Dispose() => _sidecar.Dispose();

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

        using var response = await _sidecar.Client.SendAsync(request);
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

        using var response = await _sidecar.Client.SendAsync(request);
        using var health = await _sidecar.Client.GetAsync(new Uri("/healthz", UriKind.Relative));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
        Assert.DoesNotContain(Token, _sidecar.LogText, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_strictly_sequential_client_is_never_refused()
    {
        for (var i = 0; i < 150; i++)
        {
            using var response = await PostAsync($"Timeout performing GET seq{i} (5000ms), qu: 0, qs: 1, in: 0");
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
    }

    private async Task<HttpResponseMessage> PostAsync(string message)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, Timeouts) { Content = new StringContent(message, Encoding.UTF8, "text/plain") };
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Token);
        return await _sidecar.Client.SendAsync(request);
    }
}
