using System.Diagnostics;
using System.Net.Sockets;
using System.Text.Json;
using System.Text.RegularExpressions;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// What an operator deploys: the compose file (parsed by Debian's docker-compose; every mounted file
/// exists), the Kubernetes manifests (structure, the PrometheusRule built from the shipped rules), and
/// the local stack script (comes up, answers, and Ctrl-C leaves nothing running).
/// </summary>
public sealed partial class DeploymentTests
{
    private static readonly string Root = BuiltProgram.RepositoryRoot;

    [Fact]
    public async Task The_compose_file_parses_and_every_file_it_mounts_exists()
    {
        var (exitCode, output, error) = await RunAsync("docker-compose", "-f", Path.Combine(Root, "docker-compose.yml"), "config");

        Assert.True(exitCode == 0, output + error);
        foreach (var service in (string[])["redis:", "muxwatch:", "prometheus:", "alertmanager:", "grafana:"])
        {
            Assert.Contains(service, output, StringComparison.Ordinal);
        }

        var compose = await File.ReadAllTextAsync(Path.Combine(Root, "docker-compose.yml"));
        var mounts = Mount().Matches(compose).Select(m => m.Groups["path"].Value).ToList();
        Assert.True(mounts.Count >= 5, $"only {mounts.Count} mounts found");
        Assert.All(mounts, path => Assert.True(File.Exists(Path.Combine(Root, path)) || Directory.Exists(Path.Combine(Root, path)), $"{path} is mounted but does not exist"));
        Assert.Contains("./alerts/muxwatch.rules.yml", mounts);
        Assert.Contains("read_only: true", compose, StringComparison.Ordinal);

        var (promtool, promOutput, promError) = await RunAsync("promtool", "check", "config", "--syntax-only", Path.Combine(Root, "deploy", "prometheus", "prometheus.yml"));
        Assert.True(promtool == 0, promOutput + promError);
        var (amtool, amOutput, amError) = await RunAsync("amtool", "check-config", Path.Combine(Root, "deploy", "alertmanager", "alertmanager.yml"));
        Assert.True(amtool == 0, amOutput + amError);
    }

    [Fact]
    public async Task The_kubernetes_sidecar_is_non_root_read_only_probed_and_scraped()
    {
        var documents = await YamlDocumentsAsync(Path.Combine(Root, "deploy", "kubernetes", "sidecar.yaml"));
        var deployment = documents.Single(d => d.GetProperty("kind").GetString() == "Deployment");
        var service = documents.Single(d => d.GetProperty("kind").GetString() == "Service");
        var monitor = documents.Single(d => d.GetProperty("kind").GetString() == "ServiceMonitor");

        var pod = deployment.GetProperty("spec").GetProperty("template");
        var sidecar = pod.GetProperty("spec").GetProperty("containers").EnumerateArray().Single(c => c.GetProperty("name").GetString() == "muxwatch");
        Assert.Equal(9401, sidecar.GetProperty("ports")[0].GetProperty("containerPort").GetInt32());
        Assert.Equal("/healthz", sidecar.GetProperty("livenessProbe").GetProperty("httpGet").GetProperty("path").GetString());
        Assert.True(sidecar.GetProperty("securityContext").GetProperty("runAsNonRoot").GetBoolean());
        Assert.True(sidecar.GetProperty("securityContext").GetProperty("readOnlyRootFilesystem").GetBoolean());
        Assert.Contains(sidecar.GetProperty("env").EnumerateArray(), e => e.GetProperty("name").GetString() == "MuxWatch__Targets__0__ConnectionString" && e.TryGetProperty("valueFrom", out _));

        // The Service selects the app's pods; the ServiceMonitor selects the Service and scrapes its port.
        var podLabels = pod.GetProperty("metadata").GetProperty("labels");
        Assert.All(service.GetProperty("spec").GetProperty("selector").EnumerateObject(), l => Assert.Equal(l.Value.GetString(), podLabels.GetProperty(l.Name).GetString()));
        var serviceLabels = service.GetProperty("metadata").GetProperty("labels");
        Assert.All(monitor.GetProperty("spec").GetProperty("selector").GetProperty("matchLabels").EnumerateObject(), l => Assert.Equal(l.Value.GetString(), serviceLabels.GetProperty(l.Name).GetString()));
        var port = service.GetProperty("spec").GetProperty("ports")[0].GetProperty("name").GetString();
        Assert.Equal(port, monitor.GetProperty("spec").GetProperty("endpoints")[0].GetProperty("port").GetString());
        Assert.Equal("/metrics", monitor.GetProperty("spec").GetProperty("endpoints")[0].GetProperty("path").GetString());
    }

    [Fact]
    public async Task The_prometheus_rule_holds_exactly_the_shipped_rules()
    {
        var rule = (await YamlDocumentsAsync(Path.Combine(Root, "deploy", "kubernetes", "prometheusrule.yaml"))).Single();
        var shipped = (await YamlDocumentsAsync(Path.Combine(Root, "alerts", "muxwatch.rules.yml"))).Single();

        Assert.Equal("PrometheusRule", rule.GetProperty("kind").GetString());
        Assert.Equal(shipped.GetProperty("groups").GetRawText(), rule.GetProperty("spec").GetProperty("groups").GetRawText());
    }

    [Fact]
    public async Task The_local_stack_comes_up_answers_and_stops_on_sigterm_as_on_ctrl_c_leaving_nothing_running()
    {
        int[] ports = [FreePort.Next(), FreePort.Next(), FreePort.Next(), FreePort.Next()];
        var info = new ProcessStartInfo("bash") { RedirectStandardOutput = true, RedirectStandardError = true, ArgumentList = { Path.Combine(Root, "scripts", "local-stack.sh") } };
        info.Environment["REDIS_PORT"] = ports[0].ToString(System.Globalization.CultureInfo.InvariantCulture);
        info.Environment["MUXWATCH_PORT"] = ports[1].ToString(System.Globalization.CultureInfo.InvariantCulture);
        info.Environment["PROMETHEUS_PORT"] = ports[2].ToString(System.Globalization.CultureInfo.InvariantCulture);
        info.Environment["ALERTMANAGER_PORT"] = ports[3].ToString(System.Globalization.CultureInfo.InvariantCulture);
        info.Environment["MUXWATCH_DLL"] = BuiltProgram.PathOf("MuxWatch.Tool");
        var output = new System.Collections.Concurrent.ConcurrentQueue<string>();
        using var script = Process.Start(info)!;
        var stoppedByItself = false;
        script.OutputDataReceived += (_, e) => { if (e.Data is not null) { output.Enqueue(e.Data); } };
        script.ErrorDataReceived += (_, e) => { if (e.Data is not null) { output.Enqueue(e.Data); } };
        script.BeginOutputReadLine();
        script.BeginErrorReadLine();
        try
        {
            await Eventually.UntilAsync(() => output.Any(l => l.Contains("local-stack: up", StringComparison.Ordinal)) || script.HasExited, "the stack to come up", TimeSpan.FromSeconds(120));
            Assert.False(script.HasExited, string.Join('\n', output));
            Assert.Contains(output, l => l.Contains($"http://127.0.0.1:{ports[1]}/metrics", StringComparison.Ordinal));

            using var client = new HttpClient();
            await Eventually.UntilAsync(async () => (await client.GetStringAsync(new Uri($"http://127.0.0.1:{ports[1]}/metrics"))).Contains("muxwatch_connected{multiplexer=\"local\"", StringComparison.Ordinal),
                "MuxWatch to probe the stack's Redis");
            await Eventually.UntilAsync(async () => (await client.GetStringAsync(new Uri($"http://127.0.0.1:{ports[2]}/api/v1/targets"))).Contains("\"health\":\"up\"", StringComparison.Ordinal),
                "Prometheus to scrape MuxWatch");
        }
        finally
        {
            // SIGTERM, which the script traps as it traps Ctrl-C: a script started in the background (nohup,
            // CI, `./test.sh &`) inherits SIGINT ignored, and bash cannot trap a signal ignored on entry.
            using var terminate = Process.Start("kill", ["-TERM", script.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
            await terminate!.WaitForExitAsync();
            await Task.WhenAny(script.WaitForExitAsync(), Task.Delay(TimeSpan.FromSeconds(60))); // a deadline, not a wait for time to pass
            stoppedByItself = script.HasExited;
            if (!stoppedByItself)
            {
                script.Kill(entireProcessTree: true); // never leave the stack running, whatever failed
            }
        }

        Assert.True(stoppedByItself, "the script did not stop within 60 s of SIGTERM: " + string.Join('\n', output));

        foreach (var port in ports)
        {
            await Eventually.UntilAsync(() => !Listening(port), $"nothing listening on {port} after SIGTERM");
        }
    }

    private static bool Listening(int port)
    {
        try
        {
            using var client = new TcpClient();
            client.Connect("127.0.0.1", port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>The YAML documents of a file, as JSON (through Debian's python3-yaml, which docker-compose depends on).</summary>
    private static async Task<List<JsonElement>> YamlDocumentsAsync(string path)
    {
        var (exitCode, output, error) = await RunAsync("python3", "-c",
            "import sys, json, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))", path);
        Assert.True(exitCode == 0, error);
        using var document = JsonDocument.Parse(output);
        return [.. document.RootElement.EnumerateArray().Select(e => e.Clone())];
    }

    private static Task<(int ExitCode, string Output, string Error)> RunAsync(string program, params string[] arguments)
    {
        var info = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        return BuiltProgram.RunAsync(info);
    }

    [GeneratedRegex(@"^\s+-\s+(?<path>\./[^:\s]+):", RegexOptions.Multiline)]
    private static partial Regex Mount();
}
