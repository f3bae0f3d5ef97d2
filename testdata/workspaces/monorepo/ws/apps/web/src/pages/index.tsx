export default function Home() {}
