using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>/metrics and /api/* each on a port of its own, /metrics behind a bearer token: as an operator exposes them.</summary>
[Trait("Category", "ServiceProcess")] // run once more on the container's native build by test.sh
public sealed class ExposureTests : IAsyncLifetime
{
    private const string MetricsToken = "metrics-token-0123456789abcdef";
    private readonly int _metricsPort = FreePort.Next();
    private readonly int _apiPort = FreePort.Next();
    private Process _process = null!;

    public async Task InitializeAsync()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Tool",
            "--urls", $"http://127.0.0.1:{_metricsPort};http://127.0.0.1:{_apiPort}",
            $"--MuxWatch:Metrics:Port={_metricsPort}", $"--MuxWatch:Metrics:BearerToken={MetricsToken}",
            $"--MuxWatch:Api:Port={_apiPort}",
            "--MuxWatch:Targets:0:Name=none", $"--MuxWatch:Targets:0:ConnectionString=127.0.0.1:{FreePort.Next()}");
        _process = Process.Start(info)!;
        _process.OutputDataReceived += (_, _) => { };
        _process.ErrorDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
        using var client = new HttpClient();
        await Eventually.UntilAsync(async () => !_process.HasExited && (await client.GetAsync(new Uri($"http://127.0.0.1:{_apiPort}/healthz"))).IsSuccessStatusCode, "the service to start");
    }

    public async Task DisposeAsync()
    {
        _process.Kill(entireProcessTree: true);
        await _process.WaitForExitAsync();
        _process.Dispose();
    }

    [Fact]
    public async Task Metrics_answer_only_on_their_port_and_only_with_the_token()
    {
        using var client = new HttpClient();
        using var withoutToken = await client.GetAsync(new Uri($"http://127.0.0.1:{_metricsPort}/metrics"));
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri($"http://127.0.0.1:{_metricsPort}/metrics"));
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", MetricsToken);
        using var withToken = await client.SendAsync(request);
        using var otherPort = new HttpRequestMessage(HttpMethod.Get, new Uri($"http://127.0.0.1:{_apiPort}/metrics"));
        otherPort.Headers.Authorization = new AuthenticationHeaderValue("Bearer", MetricsToken);
        using var onApiPort = await client.SendAsync(otherPort);

        Assert.Equal(HttpStatusCode.Unauthorized, withoutToken.StatusCode);
        Assert.DoesNotContain(MetricsToken, await withoutToken.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, withToken.StatusCode);
        Assert.Contains("muxwatch_probe_cycle_seconds", await withToken.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.NotFound, onApiPort.StatusCode);
    }

    [Fact]
    public async Task The_api_answers_only_on_its_port()
    {
        using var client = new HttpClient();
        using var onApiPort = await client.GetAsync(new Uri($"http://127.0.0.1:{_apiPort}/api/status"));
        using var onMetricsPort = await client.GetAsync(new Uri($"http://127.0.0.1:{_metricsPort}/api/status"));

        Assert.Equal(HttpStatusCode.OK, onApiPort.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, onMetricsPort.StatusCode);
    }
}
